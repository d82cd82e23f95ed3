// The Connect options of every backend call (kept apart from the transport code so the public declarations need no
// Node types).
import type { BinaryReadOptions, BinaryWriteOptions, JsonReadOptions, JsonWriteOptions } from "@bufbuild/protobuf";
import type { Compression } from "@connectrpc/connect/protocol";

/** The Connect options that apply to every backend's calls (those of connect-node's `createGrpcTransport`). */
export interface EndpointTransportOptions {
  readonly useBinaryFormat?: boolean;
  readonly jsonOptions?: Partial<JsonReadOptions & JsonWriteOptions>;
  readonly binaryOptions?: Partial<BinaryReadOptions & BinaryWriteOptions>;
  readonly acceptCompression?: Compression[];
  readonly sendCompression?: Compression;
  readonly compressMinBytes?: number;
  readonly readMaxBytes?: number;
  readonly writeMaxBytes?: number;
}

/** A8 keepalive of the backend connections (keepalive.ts). */
export interface KeepaliveOptions {
  /** Default: off (gRPC's). At least 10 s; larger than Node's timer limit (about 24.8 days) means that limit. */
  readonly keepaliveTimeMs?: number;
  /** Default 20 s. */
  readonly keepaliveTimeoutMs?: number;
  /** Default false: ping only while calls are in flight. */
  readonly keepalivePermitWithoutCalls?: boolean;
}
