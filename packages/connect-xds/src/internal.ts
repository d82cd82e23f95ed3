// Knobs for tests, benchmarks and sibling packages: time, randomness, the route table, cluster_impl. Outside semver.

export type { ClusterImplConfig } from "./cluster-impl.js";
export { ClusterImpl } from "./cluster-impl.js";
export { MIN_CONNECT_TIMEOUT_MS } from "./constants.js";
export { leastRequestPick } from "./policies/least-request.js";
export { ringHashPick } from "./policies/ring-hash-picker.js";
export type { HashRing, RingEndpoint } from "./policies/ring-hash-ring.js";
export { buildHashRing, resolveRingHashConfig } from "./policies/ring-hash-ring.js";
export type { StrideScheduler } from "./policies/wrr-scheduler.js";
export { createSequence, createStrideScheduler } from "./policies/wrr-scheduler.js";
export { xxHash64, xxHash64StringInto } from "./policies/xx-hash64.js";
export { createUniform, intDraw } from "./random.js";
export { compileRouteMatch, findVirtualHost } from "./route-match.js";
export type { RouteTableOptions } from "./route-table.js";
export { createRouteTable, MAX_CACHED_PATHS } from "./route-table.js";
export { createWorkSerializer } from "./work-serializer.js";
export type { XdsTransportInternals } from "./xds-transport.js";
export { createXdsTransportWithInternals } from "./xds-transport.js";
