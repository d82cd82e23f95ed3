// @xdskit/xds-client: end-user API first.
// For people extending the library: resource types and transports.
export type {
  AuthorityConfig,
  Bootstrap,
  CertificateProviderConfig,
  ChannelCredentialsConfig,
  NodeConfig,
  XdsServerConfig,
} from "./bootstrap.js";
export { BootstrapError, parseBootstrap, parseBootstrapText } from "./bootstrap.js";
export type { XdsFeatures } from "./features.js";
export type { Logger, LogLevel } from "./logger.js";
export type { MetricLabels, XdsCounterName, XdsGaugeName, XdsMetricsRecorder } from "./metrics.js";
export { XdsMetricName } from "./metrics.js";
export type { CacheState, ResourceResult, ResourceWatcher } from "./resource-state.js";
export type { DecodeContext, DecodeResult, ResourceType } from "./resource-type.js";
export type { TransportOptions, XdsStream, XdsTransport, XdsTransportFactory } from "./transport.js";
export { createConnectTransport, DEFAULT_MAX_RECEIVE_MESSAGE_BYTES } from "./transport.js";
export type { WatchOptions, XdsClient, XdsClientOptions } from "./xds-client.js";
export { createXdsClient } from "./xds-client.js";
export type { StatusCode as StatusCodeValue, XdsErrorKind } from "./xds-error.js";
export { StatusCode, statusCodeName, XdsError } from "./xds-error.js";
