// What the two ADS protocols (state of the world, delta) share in a call: the stream, its connect deadline, the
// does-not-exist timers of what it subscribed, reading and decoding responses, and the ACK/NACK decision. A call is
// protocol only: it never touches the cache; the channel hands each decoded response to the layers above, then asks
// the call to ACK or NACK it. Every timer a call starts dies with it (docs/architecture.md#timers).
import { create } from "@bufbuild/protobuf";
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { type Status, StatusSchema } from "@xdskit/protos/google/rpc/status_pb";
import type { XdsServerConfig } from "../bootstrap/bootstrap-types.js";
import type { ScopedLogger } from "../observability/logger.js";
import type { Clock } from "../shared/clock.js";
import { StatusCode } from "../shared/xds-error.js";
import type { ResourceState } from "../state/resource-state.js";
import type { XdsStream } from "../transport/transport-types.js";
import type { DecodedResponse, DecodeSettings } from "../wire/decoded-response.js";
import { nackDetail } from "../wire/nack-detail.js";
import type { ResourceType } from "../wire/resource-type.js";
import { createWatchTimers } from "./watch-timers.js";

/** One ADS call (stream) on a server. */
export interface AdsCall {
  readonly id: number;
  /** Sends what brings the server up to date with the subscriptions of `typeUrl`, if anything. */
  update(typeUrl: string): void;
  /** The next response, decoded; undefined when the server ended the stream with OK. Rejects when the stream fails. */
  next(): Promise<DecodedResponse | undefined>;
  /** ACKs or NACKs a response once the layers above applied it (one request per response). */
  acknowledge(response: DecodedResponse): void;
  /** Ends the stream and every timer of the call; no callback of the call runs afterwards. */
  cancel(): void;
}

/** What a call needs from its channel. */
export interface CallHost {
  readonly server: XdsServerConfig;
  readonly node: Node;
  readonly clock: Clock;
  readonly log: ScopedLogger;
  readonly decode: DecodeSettings;
  /** Milliseconds the stream has to get established before the call fails (docs/decisions.md#connect-deadline). */
  readonly connectTimeoutMs: number;
  /** The subscriptions of `typeUrl` the call must request, in a stable order. */
  subscriptions(typeUrl: string): readonly ResourceState[];
  /** Delta: name -> version of what the wildcards of `typeUrl` hold (a new stream's `initial_resource_versions`). */
  coveredVersions(typeUrl: string): Iterable<[string, string]>;
  /** The registered resource type of a type URL. */
  typeOf(typeUrl: string): ResourceType<unknown> | undefined;
  /** Set while a registered type's decoder is still loading: a response is decoded once it settles. */
  decodersLoading(): Promise<void> | undefined;
  /** A does-not-exist timer of this call fired for `state` (`transient`: the 30 s `resource_timer_is_transient_error` one). */
  expired(state: ResourceState, transient: boolean): void;
}

/** Thrown into the read loop when the stream was not established in time. */
export class ConnectDeadlineError extends Error {
  readonly code = StatusCode.DEADLINE_EXCEEDED;
  constructor(readonly ms: number) {
    super(`no HTTP/2 connection within the connect deadline of ${ms} ms`);
  }
}

let nextCallId = 1;

/** The protocol-independent half of a call, which sotw-call.ts and delta-call.ts complete. */
export interface CallCore<Req> {
  readonly id: number;
  /** Writes a request (the node goes on the first); arms the timers of `subscribed` once it is on the stream. */
  send(request: Req, subscribed: readonly ResourceState[]): void;
  next(): Promise<DecodedResponse | undefined>;
  /** The `error_detail` of the NACK of `response` (logged with every error), or undefined to ACK. */
  nackStatus(response: DecodedResponse): Status | undefined;
  /** Stops the timers a response answered. */
  settle(response: DecodedResponse): void;
  /** Stops the timers of subscriptions of `typeUrl` that are gone. */
  retain(typeUrl: string, subscribed: readonly ResourceState[]): void;
  cancel(): void;
}

export function createCallCore<Req extends { node?: Node | undefined }, Res>(
  host: CallHost,
  stream: XdsStream<Req, Res>,
  decode: (response: Res) => DecodedResponse | undefined,
  label: string,
): CallCore<Req> {
  const id = nextCallId++;
  const { clock } = host;
  let sentNode = false;
  let cancelled = false;
  let established = stream.established === undefined;
  const transient = host.decode.features.dataErrorHandling && host.server.resourceTimerIsTransientError;
  const timers = createWatchTimers(clock, transient ? 30_000 : 15_000, (state) => host.expired(state, transient));
  // Until the stream is established, reads race the connect deadline; once it is, they do not (no reaction is left
  // waiting on a promise that never settles).
  let deadline: { readonly hit: Promise<never>; readonly handle: unknown } | undefined;
  if (stream.established !== undefined) {
    let fail: (error: Error) => void = () => {};
    const hit = new Promise<never>((_, reject) => {
      fail = reject;
    });
    hit.catch(() => {});
    deadline = {
      hit,
      handle: clock.setTimeout(() => fail(new ConnectDeadlineError(host.connectTimeoutMs)), host.connectTimeoutMs),
    };
    stream.established.then(() => {
      if (cancelled) return;
      established = true;
      clearDeadline();
    });
  }

  function clearDeadline(): void {
    if (deadline === undefined) return;
    clock.clearTimeout(deadline.handle);
    deadline = undefined;
  }

  return {
    id,
    send(request, subscribed) {
      if (cancelled) return;
      if (!sentNode) {
        request.node = host.node;
        sentNode = true;
      }
      const written = stream.send(request);
      // A57: a subscription's timer starts once its request is on an established stream.
      Promise.all([written, stream.established]).then(
        () => {
          if (!cancelled && established) timers.arm(subscribed);
        },
        () => {
          // The stream ended; the read loop reports why.
        },
      );
    },
    async next() {
      for (;;) {
        const read = stream.responses.next();
        const result = deadline === undefined ? await read : await Promise.race([read, deadline.hit]);
        if (result.done) return undefined;
        const loading = host.decodersLoading();
        if (loading !== undefined) await loading;
        const decoded = decode(result.value);
        if (decoded !== undefined) return decoded;
      }
    },
    nackStatus(response) {
      if (response.errors.length === 0) return undefined;
      const nodeId = host.node.id;
      host.log.warn(
        () =>
          `NACK ${response.typeUrl} version ${response.version} nonce ${response.nonce} (${label} #${id}): ${response.errors.join("; ")}`,
      );
      return create(StatusSchema, { code: StatusCode.INVALID_ARGUMENT, message: nackDetail(response.errors, nodeId) });
    },
    settle(response) {
      timers.settle(response.typeUrl);
    },
    retain(typeUrl, subscribed) {
      timers.retain(typeUrl, subscribed);
    },
    cancel() {
      if (cancelled) return;
      cancelled = true;
      clearDeadline();
      timers.stopAll();
      stream.cancel();
    },
  };
}

/** A request answering a response: the response, and the NACK's `error_detail` (undefined: an ACK). */
export interface Answer {
  readonly response: DecodedResponse;
  readonly nack: Status | undefined;
}

/**
 * The AdsCall of a protocol, given how it sends what a type needs (`answer` set when the request ACKs or NACKs a
 * response); returns the subscriptions the request covered.
 */
export function protocolCall<Req>(
  core: CallCore<Req>,
  send: (typeUrl: string, answer?: Answer) => readonly ResourceState[],
): AdsCall {
  return {
    id: core.id,
    update(typeUrl) {
      core.retain(typeUrl, send(typeUrl));
    },
    next: () => core.next(),
    acknowledge(response) {
      send(response.typeUrl, { response, nack: core.nackStatus(response) });
      core.settle(response);
    },
    cancel: () => core.cancel(),
  };
}

/** The registered type of a response, or undefined (logged) for a type nobody watches: such a response is ignored. */
export function responseType(host: CallHost, typeUrl: string): ResourceType<unknown> | undefined {
  const type = host.typeOf(typeUrl);
  if (!type) host.log.warn(`ignoring a response of unknown resource type ${typeUrl}`);
  return type;
}
