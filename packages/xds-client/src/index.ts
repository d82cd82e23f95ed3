// @xdskit/xds-client: end-user API first.
// The four xDS resource types, registered like any user type, and their updates.

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
export {
  type ClusterResourceTypeOptions,
  type ClusterUpdate,
  clusterResourceType,
  createClusterResourceType,
  type DropOverload,
  type Endpoint,
  type EndpointAddress,
  type EndpointUpdate,
  endpointResourceType,
  type FilterConfigOverride,
  type FilterConfigOverrides,
  type HashPolicy,
  type HeaderMatcher,
  type HealthStatusName,
  type HttpFilter,
  type LbPolicyConfig,
  type ListenerRouteSource,
  type ListenerUpdate,
  type Locality,
  type LocalityName,
  listenerResourceType,
  type OrcaPropagationConfig,
  type OutlierDetectionConfig,
  type PathMatcher,
  type Priority,
  type RetryPolicy,
  type Route,
  type RouteAction,
  type RouteConfigurationUpdate,
  type RouteMatch,
  routeConfigurationResourceType,
  type StringMatcher,
  type TypedConfig,
  type UpstreamTlsConfig,
  type VirtualHost,
} from "./resources/index.js";
export type { TransportOptions, XdsStream, XdsTransport, XdsTransportFactory } from "./transport.js";
export { createConnectTransport, DEFAULT_MAX_RECEIVE_MESSAGE_BYTES } from "./transport.js";
export type { WatchOptions, XdsClient, XdsClientOptions } from "./xds-client.js";
export { createXdsClient } from "./xds-client.js";
export type { StatusCode as StatusCodeValue, XdsErrorKind } from "./xds-error.js";
export { StatusCode, statusCodeName, XdsError } from "./xds-error.js";
