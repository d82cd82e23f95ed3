// The transport's interfaces: what the client needs of a connection to one xDS server (transport.ts has the default).
import type {
  DeltaDiscoveryRequest,
  DeltaDiscoveryResponse,
  DiscoveryRequest,
  DiscoveryResponse,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { DeltaResponseBytes } from "@xdskit/protos/xdskit/client/v1/delta_response_pb";
import type { SotwResponseBytes } from "@xdskit/protos/xdskit/client/v1/sotw_response_pb";
import type { XdsServerConfig } from "../bootstrap/bootstrap-types.js";
import type { ResponseEntries } from "../wire/decode-memo.js";

/**
 * A SotW response as the default transport reads one holding only a version, resources, a type URL and a nonce (not
 * a protobuf message): the `i`th resource is the bytes of its `Any`, `entries.memory[entries.starts[i],
 * entries.ends[i])`.
 */
export interface SotwResponseRanges {
  readonly $typeName: "xdskit.client.v1.SotwResponseRanges";
  readonly versionInfo: string;
  readonly typeUrl: string;
  readonly nonce: string;
  readonly entries: ResponseEntries;
}

/**
 * A delta response as the default transport reads one holding only a system version, resources, a type URL, a nonce
 * and `removed_resources` (not a protobuf message): the `i`th resource is the bytes of its `Resource`,
 * `entries.memory[entries.starts[i], entries.ends[i])`.
 */
export interface DeltaResponseRanges {
  readonly $typeName: "xdskit.client.v1.DeltaResponseRanges";
  readonly systemVersionInfo: string;
  readonly typeUrl: string;
  readonly nonce: string;
  readonly removedResources: readonly string[];
  readonly entries: ResponseEntries;
}

/** One bidi stream. */
export interface XdsStream<Req, Res> {
  /** Queues a request; resolves once it was handed to the connection, rejects if the stream has ended. */
  send(request: Req): Promise<void>;
  /** The responses; ends when the server closes the stream with OK, throws when it fails. */
  readonly responses: AsyncIterator<Res>;
  /** Ends the stream from our side (no error is reported to the reader). */
  cancel(): void;
  /**
   * Resolves once the stream runs on an established connection (for HTTP/2: the server answered the connection
   * preface), which is when a request written on it counts as sent (A57). Never settles if that does not happen.
   * Absent: a request counts as sent once `send` resolves.
   */
  readonly established?: Promise<void>;
}

/** The streams of one xDS server. */
export interface XdsTransport {
  /**
   * SotW responses, decoded, or read as `SotwResponseBytes` or `SotwResponseRanges` (each resource the bytes of its
   * `Any`, which lets the client skip what it already has before decoding it; the default transport does this).
   */
  streamAggregatedResources(): XdsStream<DiscoveryRequest, DiscoveryResponse | SotwResponseBytes | SotwResponseRanges>;
  /**
   * Delta responses, decoded, or read as `DeltaResponseBytes` or `DeltaResponseRanges` (each resource the bytes of its
   * `Resource`, which the client reads without protobuf-es when it is encoded as servers encode one; the default
   * transport does this).
   */
  deltaAggregatedResources(): XdsStream<
    DeltaDiscoveryRequest,
    DeltaDiscoveryResponse | DeltaResponseBytes | DeltaResponseRanges
  >;
  /** Closes the connection and every stream on it. */
  close(): void;
  /**
   * For a server named by several addresses (replicas, docs/decisions.md#replicas-in-a-bootstrap): the last stream
   * failed before any response, so the next stream dials the next address. True while an address not tried since
   * the last response remains; false once every one has failed (the next round then starts from the next address).
   * Absent, or always false, for a server of one address.
   */
  nextAddress?(): boolean;
}

export interface TransportOptions {
  /** Largest message accepted from the server, in bytes. */
  readonly maxReceiveMessageBytes: number;
}

export type XdsTransportFactory = (server: XdsServerConfig, options: TransportOptions) => XdsTransport;
