// @xdskit/xds-client. Grouped by audience (import sorting is off for this file): end users first.
export { createXdsClient, DEFAULT_CONNECT_TIMEOUT_MS } from "./client/xds-client.js";
export type { WatchOptions, XdsClient, XdsClientOptions } from "./client/xds-client.js";
export type { CacheState, ResourceResult, ResourceWatcher } from "./state/resource-state.js";
export type { WildcardWatcher } from "./cache/wildcard-state.js";
export { isXdsError, StatusCode, statusCodeName, XdsError } from "./shared/xds-error.js";
export type { StatusCode as StatusCodeValue, XdsErrorKind } from "./shared/xds-error.js";
export { BootstrapError, parseBootstrap, parseBootstrapText } from "./bootstrap/bootstrap.js";
export type {
  Bootstrap,
  BootstrapAuthorityConfig,
  BootstrapChannelCredentials,
  BootstrapConfig,
  BootstrapNodeConfig,
  BootstrapServerConfig,
  BootstrapCertificateProvider,
  XdsServerConfig,
} from "./bootstrap/bootstrap-types.js";
export {
  expandServerListenerTemplate,
  formatListeningAddress,
  listenerAddressMatches,
  serverListenerResourceName,
} from "./bootstrap/server-listener-name.js";
export type { ListeningAddress } from "./bootstrap/server-listener-name.js";
export type { XdsFeatures } from "./shared/features.js";
export type { Logger, LogLevel } from "./observability/logger.js";
export { XdsMetricName } from "./observability/metrics.js";
export type { MetricLabels, XdsCounterName, XdsGaugeName, XdsMetricsRecorder } from "./observability/metrics.js";

// The four xDS resource types, registered like any user type (their decoders load when first used), and their updates.
export {
  clusterResourceType,
  createClusterResourceType,
  endpointResourceType,
  listenerResourceType,
  routeConfigurationResourceType,
} from "./client/builtin-types.js";
export type {
  ClusterResourceTypeOptions,
  ClusterUpdate,
  DropOverload,
  Endpoint,
  EndpointAddress,
  EndpointUpdate,
  FilterConfigOverride,
  FilterConfigOverrides,
  HashPolicy,
  HeaderMatcher,
  HealthStatusName,
  HttpFilter,
  LbPolicyConfig,
  ClientListenerUpdate,
  ListenerRouteSource,
  ListenerUpdate,
  Locality,
  LocalityName,
  OrcaPropagationConfig,
  OrcaSelection,
  OutlierDetectionConfig,
  PathMatcher,
  Priority,
  RetryPolicy,
  Route,
  RouteAction,
  RouteConfigurationUpdate,
  RouteMatch,
  StringMatcher,
  TypedConfig,
  UpstreamTlsConfig,
  VirtualHost,
} from "./resources/index.js";

// The mesh layer (A36 servers, A29 TLS, A41 RBAC): what an xDS-enabled server and a client's TLS read of the updates.
export type {
  CertificateProviderInstance,
  DownstreamTlsConfig,
  FilterChainMatch,
  ListenerAddress,
  RbacFilterConfig,
  RbacPolicy,
  RbacRule,
  RbacRules,
  ServerFilterChain,
  ServerHttpFilter,
  ServerHttpFilterConfig,
  ServerListenerUpdate,
} from "./resources/index.js";
export type { CidrRange } from "./shared/ip-address.js";
export { lookupFilterChain, selectFilterChain } from "./mesh/filter-chain-table.js";
export { compileRbac, evaluateRbac } from "./mesh/rbac-engine.js";
export {
  compileSanMatcher,
  parseSubjectAltNames,
  principalNamesOf,
  rfc2253Subject,
} from "./mesh/peer-certificate.js";
export type { PeerCertificate, SubjectAltName } from "./mesh/peer-certificate.js";
export type {
  ConnectionAddresses,
  ConnectionSourceType,
  FilterChainMatchEntry,
  FilterChainTable,
} from "./mesh/filter-chain-types.js";
export type {
  CompiledRbac,
  RbacDecision,
  RbacHeaders,
  RbacLocal,
  RbacPeer,
  RbacRequest,
} from "./mesh/rbac-types.js";
export { createCertificateProviders } from "./certificates/certificate-providers.js";
export type {
  CertificateIdentity,
  CertificateMaterial,
  CertificateProvider,
  CertificateProviders,
  CertificateProvidersOptions,
  CertificateRoots,
} from "./certificates/certificate-provider-types.js";

// For people extending the library: custom resource types, bootstrap pieces and transports.
export type { DecodeContext, DecodeResult, ResourceType } from "./wire/resource-type.js";
export type {
  AuthorityConfig,
  CertificateProviderConfig,
  ChannelCredentialsConfig,
  FileWatcherConfig,
  NodeConfig,
} from "./bootstrap/bootstrap-types.js";
export { createConnectTransport, DEFAULT_MAX_RECEIVE_MESSAGE_BYTES } from "./transport/transport.js";
export type {
  DeltaResponseRanges,
  SotwResponseRanges,
  TransportOptions,
  XdsStream,
  XdsTransport,
  XdsTransportFactory,
} from "./transport/transport-types.js";
export type { ResponseEntries } from "./wire/decode-memo.js";
