import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type { Status } from "@xdskit/protos/google/rpc/status_pb";
import type { StreamKind } from "../hooks/hook-events.js";

// What `server.streams()` shows of each open stream.

/** A snapshot of one type on one stream, for tests and debugging. */
export interface StreamTypeInfo {
  readonly typeUrl: string;
  readonly wildcard: boolean;
  /** The parameter map of each wildcard subscription (`{}` for `*` without; a `*` locator's dynamic parameters). */
  readonly wildcardParameters: readonly Readonly<Record<string, string>>[];
  /** Names subscribed by name, without parameters (a wildcard stream may list some too). */
  readonly resourceNames: readonly string[];
  /** Subscriptions with dynamic parameters (`resource_locators`), each getting the variant its parameters match. */
  readonly resourceLocators: readonly {
    readonly name: string;
    readonly dynamicParameters: Readonly<Record<string, string>>;
  }[];
  /** Nonce of the latest response of this type ("" if none). */
  readonly lastNonce: string;
  /** Version of the latest response ("" if none). */
  readonly lastVersion: string;
  /** Version the client last ACKed (SotW), or nonce it last ACKed (delta). */
  readonly ackedVersion: string;
  /** The `error_detail` of the latest NACK, until the next ACK. */
  readonly nack: Status | undefined;
  /**
   * Subscription -> version of what the server believes the client holds for it; a subscription with parameters
   * reads `name{key=value,...}`.
   */
  readonly sentVersions: ReadonlyMap<string, string>;
  /**
   * What the latest response of this type waits for before the next one may follow: the client's ACK or NACK, the
   * connection to take it (a client that does not read), or `release()` of a hook's hold; undefined when nothing.
   */
  readonly waitingFor: "ack" | "write" | "release" | undefined;
  /** Changes arrived while waiting: the newest state goes out, once, when the wait ends. */
  readonly pending: boolean;
}

export interface StreamInfo {
  readonly id: number;
  readonly kind: StreamKind;
  readonly peer: string | undefined;
  readonly node: Node | undefined;
  readonly types: readonly StreamTypeInfo[];
  /** Bytes written on the stream that the connection has not taken yet. */
  readonly queuedBytes: number;
}
