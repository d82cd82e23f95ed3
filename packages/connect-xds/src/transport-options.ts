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
