// Knobs for tests, benchmarks and sibling packages: time, randomness, the route table, cluster_impl. Outside semver.

export type { ClusterImplConfig } from "./clusters/cluster-impl.js";
export { ClusterImpl } from "./clusters/cluster-impl.js";
export { MIN_CONNECT_TIMEOUT_MS } from "./connections/constants.js";
export { leastRequestPick } from "./policies/least-request.js";
export { ringHashPick } from "./policies/ring-hash-picker.js";
export type { HashRing, RingEndpoint } from "./policies/ring-hash-ring.js";
export { buildHashRing, resolveRingHashConfig } from "./policies/ring-hash-ring.js";
export type { StrideScheduler } from "./policies/wrr-scheduler.js";
export { createSequence, createStrideScheduler } from "./policies/wrr-scheduler.js";
export { xxHash64, xxHash64StringInto } from "./policies/xx-hash64.js";
export { compileRouteMatch, findVirtualHost } from "./resolver/route-match.js";
export type { RouteTableOptions } from "./resolver/route-table.js";
export { createRouteTable, MAX_CACHED_PATHS } from "./resolver/route-table.js";
export { createUniform, intDraw } from "./shared/random.js";
export { createWorkSerializer } from "./shared/work-serializer.js";
export { createXdsTransportWithInternals } from "./transport/xds-transport.js";
export type { XdsTransportInternals } from "./transport/xds-transport-options.js";
