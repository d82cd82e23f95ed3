// @xdskit/connect-xds: a Connect transport routed by xDS (gRFC A27, A28). Grouped by audience (import sorting is
// off for this file): end users first, then people writing load-balancing policies.
export { createXdsTransport } from "./transport/xds-transport.js";
export type { XdsTransport, XdsTransportOptions } from "./transport/xds-transport-options.js";
export type { EndpointTransportOptions } from "./connections/transport-options.js";
export { CallMetricName } from "./call/metrics.js";
export type { CallCounterName, CallHistogramName, CallMetricsRecorder, MetricLabels } from "./call/metrics.js";
export type { RetryBufferLimits } from "./policies/retry-buffer.js";
export type { RetryThrottleConfig } from "./policies/retry-throttle.js";
export type { KeepaliveOptions } from "./connections/transport-options.js";
export type { FallbackCredentials } from "./credentials/fallback-credentials.js";

// For people writing LB policies (A52) and per-call features: the extension points.
export type {
  CallEndInfo,
  CallTracker,
  CompletePick,
  ConnectivityState,
  LbEndpoint,
  LbHelper,
  LbLocality,
  LbMetrics,
  LbPolicy,
  LbPolicyFactory,
  LbPolicyUpdate,
  LoadReportListener,
  PickInfo,
  Picker,
  PickResult,
  Subchannel,
} from "./balancer/lb-policy.js";
export { failingPicker, idlePicker, queuePicker, stripPath } from "./balancer/lb-policy.js";
export { createLbPolicyRegistry, LbConfigError } from "./balancer/lb-registry.js";
export type { LbPolicyRegistry } from "./balancer/lb-registry.js";
export type { ConfigSelector, RouteFilter, RouteSelection } from "./balancer/config-selector.js";
export {
  builtinLbPolicies,
  pickFirstPolicy,
  priorityPolicy,
  roundRobinPolicy,
  weightedTargetPolicy,
  wrrLocalityPolicy,
} from "./policies/index.js";
export { createLeastRequestPolicyFactory } from "./policies/least-request-policy.js";
export type { LeastRequestConfig } from "./policies/least-request-policy.js";
export { createOutlierDetectionPolicyFactory } from "./policies/outlier-detection-policy.js";
export type { OutlierDetectionPolicyConfig } from "./policies/outlier-detection-policy.js";
export { createRingHashPolicyFactory } from "./policies/ring-hash-policy.js";
export type { RingHashPolicyOptions } from "./policies/ring-hash-policy.js";
export type { RingHashConfig } from "./policies/ring-hash-ring.js";
export { createWrrPolicyFactory, WRR_METRICS } from "./policies/wrr-policy.js";
export type { WrrConfig } from "./policies/wrr-weights.js";
export type { PickFirstConfig } from "./policies/pick-first.js";
export type { PriorityConfig } from "./policies/priority.js";
export type { WeightedTargetConfig } from "./policies/weighted-target.js";
export type { WrrLocalityConfig } from "./policies/wrr-locality.js";
export { localityLabel } from "./clusters/locality.js";
