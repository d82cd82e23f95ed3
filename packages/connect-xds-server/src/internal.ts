// Knobs for benchmarks and sibling packages. Outside semver: may change in any release.
export type { RouteTable, RouteTableOptions } from "./routing/route-table.js";
export { compileRouteTable } from "./routing/route-table.js";
export type { CallDenial, CallView, ServerFilterRegistry } from "./routing/server-filters.js";
export { defaultServerFilters } from "./routing/server-filters.js";
