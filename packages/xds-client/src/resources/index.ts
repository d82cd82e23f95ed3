// The four xDS resource types gRPC clients watch, registered with the client like any user type.
export { clusterResourceType, createClusterResourceType, parseOrcaPropagation } from "./cluster.js";
export type {
  ClusterResourceTypeOptions,
  ClusterUpdate,
  OrcaPropagationConfig,
  OrcaSelection,
  OutlierDetectionConfig,
} from "./cluster-types.js";
export { endpointResourceType } from "./endpoint.js";
export type {
  DropOverload,
  Endpoint,
  EndpointAddress,
  EndpointUpdate,
  HealthStatusName,
  Locality,
  LocalityName,
  Priority,
} from "./endpoint-types.js";
export type { TypedConfig } from "./extension.js";
export type { ServerHttpFilterConfig } from "./http-filter-config.js";
export type { LbPolicyConfig } from "./lb-policy.js";
export { listenerResourceType } from "./listener.js";
export type {
  ClientListenerUpdate,
  DownstreamTlsConfig,
  FilterChainMatch,
  HttpFilter,
  ListenerAddress,
  ListenerRouteSource,
  ListenerUpdate,
  ServerFilterChain,
  ServerHttpFilter,
  ServerListenerUpdate,
} from "./listener-types.js";
export type { HeaderMatcher, PathMatcher, StringMatcher } from "./matchers.js";
export type { RbacFilterConfig, RbacPolicy, RbacRule, RbacRules } from "./rbac-types.js";
export { routeConfigurationResourceType } from "./route-configuration.js";
export type {
  FilterConfigOverride,
  FilterConfigOverrides,
  HashPolicy,
  RetryableCode,
  RetryPolicy,
  Route,
  RouteAction,
  RouteConfigurationBody,
  RouteConfigurationUpdate,
  RouteMatch,
  VirtualHost,
  WeightedClusterEntry,
} from "./route-types.js";
export type { CertificateProviderInstance, UpstreamTlsConfig } from "./upstream-tls.js";
