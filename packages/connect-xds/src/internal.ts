// Knobs for tests, benchmarks and sibling packages: time, randomness, the route table, cluster_impl. Outside semver.

export type { ClusterImplConfig } from "./cluster-impl.js";
export { ClusterImpl } from "./cluster-impl.js";
export { MIN_CONNECT_TIMEOUT_MS } from "./constants.js";
export { createUniform, intDraw } from "./random.js";
export { compileRouteMatch, findVirtualHost } from "./route-match.js";
export type { RouteTableOptions } from "./route-table.js";
export { createRouteTable, MAX_CACHED_PATHS } from "./route-table.js";
export { createWorkSerializer } from "./work-serializer.js";
export type { XdsTransportInternals } from "./xds-transport.js";
export { createXdsTransportWithInternals } from "./xds-transport.js";
