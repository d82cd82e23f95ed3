// @xdskit/control-plane: an embeddable xDS management server.
// Grouped by audience (import sorting is off for this file): the server first, then the hooks tests use.

export { createManagementServer } from "./server/management-server.js";
export type {
  DynamicParametersOptions,
  ManagementServer,
  ManagementServerOptions,
} from "./server/management-server-api.js";
export type { ServerTlsOptions } from "./security/tls-options.js";
export type { AuthorizeResult, AuthorizeStream, IdentityOptions } from "./security/authorization.js";
export type { SecurityOptions } from "./security/authorization-options.js";
export type { AuthorizationClass, CanRead, StreamIdentity } from "./security/authorization-read.js";
export type { PeerCertificate, PeerIdentity } from "./security/identity.js";
export type { CanReadClientStatus, ClientStatusScope } from "./security/client-status-access.js";
export type { ResourceInput, ResourceMessage, ResourceOptions } from "./resources/resource-input.js";
export type { ResourceErrorOptions, ResourceSet } from "./resources/resource-set.js";
export type { ConstraintsInput } from "./resources/variant-group.js";
export { OverlappingVariantsError } from "./resources/overlapping-variants-error.js";
export {
  buildDynamicParameterConstraintsMap,
  DEFAULT_DYNAMIC_PARAMETERS_NAME,
} from "./resources/dynamic-parameters.js";
export type { DynamicParametersInit } from "./resources/dynamic-parameters.js";
export type { NodeScope, NodeSelector } from "./resources/resource-store.js";
export type { ServerLimits } from "./limits.js";
export { DEFAULT_LIMITS } from "./limits.js";
export type { StatusInit } from "./status.js";
export type { StreamInfo, StreamTypeInfo } from "./streams/stream-info.js";
export {
  CDS_TYPE_URL,
  DEFAULT_FULL_STATE_TYPE_URLS,
  DPDS_TYPE_URL,
  EDS_TYPE_URL,
  LDS_TYPE_URL,
  RDS_TYPE_URL,
  RESOURCE_WRAPPER_TYPE_URL,
} from "./type-urls.js";
export { formatClusterLoads } from "./lrs/lrs-loads.js";
export type { ClusterLoad, LocalityLoad, MetricLoad } from "./lrs/lrs-loads.js";
export type { LoadReportEvent, LrsPolicy, LrsSink, LrsStreamInfo } from "./lrs/lrs-sink.js";
export { noopLogger } from "./logger.js";
export type { Logger, LogLevel } from "./logger.js";

// Builders for the common resources.
export type {
  ClusterInit,
  ClusterLoadAssignmentInit,
  EndpointHealth,
  EndpointInit,
  ListenerInit,
  LocalityInit,
  RouteConfigurationInit,
  WeightedClusterInit,
} from "./resources/builders.js";
export {
  adsConfigSource,
  buildAggregateCluster,
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildLogicalDnsCluster,
  buildRouteConfiguration,
  parseHostPort,
  routerFilter,
} from "./resources/builders.js";
// Builders for the mesh: server Listeners (A36), TLS on both sides (A29), RBAC (A41).
export type {
  CertificateInstanceInit,
  DownstreamTlsInit,
  FilterChainInit,
  FilterChainMatchInit,
  RbacRulesInit,
  ServerListenerInit,
  ServerRouteConfigurationInit,
  UpstreamTlsInit,
} from "./resources/mesh-builders.js";
export {
  buildDownstreamTlsSocket,
  buildRbacFilter,
  buildServerListener,
  buildServerRouteConfiguration,
  buildUpstreamTlsSocket,
  rbacPerRoute,
} from "./resources/mesh-builders.js";

// For tests: the hooks and their events.
export { describeHookEvent } from "./hooks/hook-events.js";
export type {
  DeltaRequestEvent,
  DeltaResponseEvent,
  HookEvent,
  HookEventMap,
  RequestDisposition,
  RequestEvent,
  ResponseDelivery,
  ResponseEvent,
  SotwRequestEvent,
  SotwResponseEvent,
  StreamCloseEvent,
  StreamCloseReason,
  StreamKind,
  StreamOpenEvent,
} from "./hooks/hook-events.js";
export type {
  BreakOptions,
  InjectedResponse,
  ManagementServerHooks,
  ResponseFilter,
  WaitOptions,
} from "./hooks/hooks.js";
