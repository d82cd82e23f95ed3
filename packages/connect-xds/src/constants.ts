/** gRPC's minimum connect timeout: a connection attempt may take at least this long before it fails. */
export const MIN_CONNECT_TIMEOUT_MS = 20_000;
