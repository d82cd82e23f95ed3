// @xdskit/connect-xds-server: an xDS-enabled Connect server (gRFC A36, A29, A39, A41).
export {
  createXdsServer,
  DEFAULT_DRAIN_GRACE_MS,
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  DEFAULT_MAX_PENDING_CONNECTIONS,
} from "./xds-server.js";
export type { FallbackCredentials, ListenAddress, XdsServer, XdsServerOptions } from "./xds-server-types.js";
export type { ServingStatus } from "./serving/serving-status.js";
