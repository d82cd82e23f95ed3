import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type {
  DeltaDiscoveryRequest,
  DeltaDiscoveryResponse,
  DiscoveryRequest,
  DiscoveryResponse,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { Status } from "@xdskit/protos/google/rpc/status_pb";

// What the server reports to tests through `server.hooks`: one event per request, response, stream open and close.
// Types only, plus a one-line description of an event; the behaviour (history, waits, hold, drop) is in hooks.ts.

export type StreamKind = "sotw" | "delta";

/**
 * How the server took a request:
 * - `subscribe`: no response nonce (the first request of a type, or one sent before any response of that type);
 * - `ack` / `nack`: it carries the nonce of the latest response of its type, without / with `error_detail`;
 * - `stale` (SotW only): its nonce is not the latest of its type, so it was ignored entirely.
 */
export type RequestDisposition = "subscribe" | "ack" | "nack" | "stale";

/** What became of a response: written to the stream, held back by `hold()`, or dropped by `drop()`. */
export type ResponseDelivery = "sent" | "held" | "dropped";

/** Why a stream ended. */
export type StreamCloseReason =
  | "client-closed" // the client half-closed: the server ends with OK
  | "cancelled" // the client cancelled or the connection went away
  | "broken" // hooks.breakStreams()
  | "connection-aborted" // hooks.abortConnections()
  | "invalid-request" // a malformed request (INVALID_ARGUMENT) or one past a limit (RESOURCE_EXHAUSTED)
  | "unauthorized" // refused at its first request: PERMISSION_DENIED, or UNAUTHENTICATED (a certificate that did not verify)
  | "queue-full" // the client does not read and its queue reached maxQueuedBytesPerStream: RESOURCE_EXHAUSTED
  | "server-stopped" // stop(), restart() or close()
  | "deadline-exceeded" // the request's grpc-timeout elapsed: DEADLINE_EXCEEDED
  | "internal-error";

interface EventBase {
  /** Position in the server's event history, from 1. */
  readonly seq: number;
  readonly streamId: number;
  readonly kind: StreamKind;
}

export interface StreamOpenEvent extends EventBase {
  readonly type: "stream-open";
  /** `address:port` of the client. */
  readonly peer: string | undefined;
}

export interface StreamCloseEvent extends EventBase {
  readonly type: "stream-close";
  readonly node: Node | undefined;
  readonly reason: StreamCloseReason;
  /** The status the server ended the stream with (0 = OK); undefined when the client went away first. */
  readonly code: number | undefined;
  readonly message: string;
}

interface RequestEventBase extends EventBase {
  readonly type: "request";
  /** The stream's node (sent in its first request), even when this request carries none. */
  readonly node: Node | undefined;
  readonly typeUrl: string;
  readonly responseNonce: string;
  /** Set on a NACK. */
  readonly errorDetail: Status | undefined;
  readonly disposition: RequestDisposition;
}

export interface SotwRequestEvent extends RequestEventBase {
  readonly kind: "sotw";
  readonly request: DiscoveryRequest;
  readonly versionInfo: string;
  /** `resource_names` plus the names in `resource_locators`. */
  readonly resourceNames: readonly string[];
}

export interface DeltaRequestEvent extends RequestEventBase {
  readonly kind: "delta";
  readonly request: DeltaDiscoveryRequest;
  readonly subscribe: readonly string[];
  readonly unsubscribe: readonly string[];
}

export type RequestEvent = SotwRequestEvent | DeltaRequestEvent;

interface ResponseEventBase extends EventBase {
  readonly type: "response";
  readonly node: Node | undefined;
  readonly typeUrl: string;
  readonly nonce: string;
  /** `version_info` (SotW) or `system_version_info` (delta). */
  readonly versionInfo: string;
  /** Names of the resources in `resources`. */
  readonly resourceNames: readonly string[];
  /** Names in `resource_errors`. */
  readonly errorNames: readonly string[];
  readonly delivery: ResponseDelivery;
}

export interface SotwResponseEvent extends ResponseEventBase {
  readonly kind: "sotw";
  readonly response: DiscoveryResponse;
}

export interface DeltaResponseEvent extends ResponseEventBase {
  readonly kind: "delta";
  readonly response: DeltaDiscoveryResponse;
  readonly removedNames: readonly string[];
}

export type ResponseEvent = SotwResponseEvent | DeltaResponseEvent;

export type HookEvent = StreamOpenEvent | StreamCloseEvent | RequestEvent | ResponseEvent;

export interface HookEventMap {
  "stream-open": StreamOpenEvent;
  "stream-close": StreamCloseEvent;
  request: RequestEvent;
  response: ResponseEvent;
}

/** An event as a stream reports it: the hooks number it (`seq`). */
export type HookEventInit = HookEvent extends infer E ? (E extends HookEvent ? Omit<E, "seq"> : never) : never;

/** A response event before it is numbered. */
export type ResponseEventInit = Extract<HookEventInit, { readonly type: "response" }>;

/** One line per event, for timeouts and logs; long name lists are cut short. */
export function describeHookEvent(event: HookEvent): string {
  const names = (list: readonly string[]): string =>
    list.length > 8 ? `${list.slice(0, 8).join(",")},…(${list.length} in all)` : list.join(",");
  switch (event.type) {
    case "request":
      return `#${event.seq} request stream=${event.streamId} ${event.disposition} type=${event.typeUrl} nonce="${event.responseNonce}"${event.kind === "sotw" ? ` version="${event.versionInfo}" names=[${names(event.resourceNames)}]` : ` +[${names(event.subscribe)}] -[${names(event.unsubscribe)}]`}${event.errorDetail ? ` error="${event.errorDetail.message}"` : ""}`;
    case "response":
      return `#${event.seq} response stream=${event.streamId} ${event.delivery} type=${event.typeUrl} nonce="${event.nonce}" version="${event.versionInfo}" names=[${names(event.resourceNames)}] errors=[${names(event.errorNames)}]`;
    case "stream-open":
      return `#${event.seq} stream-open stream=${event.streamId} ${event.kind}`;
    case "stream-close":
      return `#${event.seq} stream-close stream=${event.streamId} ${event.reason} code=${String(event.code)}`;
  }
}
