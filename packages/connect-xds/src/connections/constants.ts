/** gRPC's minimum connect timeout: a connection attempt may take at least this long before it fails. */
export const MIN_CONNECT_TIMEOUT_MS = 20_000;

/**
 * The default receive limit of a backend call's messages (`readMaxBytes`): gRPC's 4 MiB, not connect-node's 4 GiB
 * (docs/decisions.md#connect-xds-receive-limit).
 */
export const DEFAULT_READ_MAX_BYTES = 4 * 1024 * 1024;
