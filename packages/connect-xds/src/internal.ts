// Knobs for tests, benchmarks and sibling packages: time, randomness and dialing. Outside semver.

export type { Dialer } from "./connection.js";
export { dialCleartext, Http2Connection, MIN_CONNECT_TIMEOUT_MS } from "./connection.js";
export { compileRouteMatch, findVirtualHost } from "./route-match.js";
export type { RouteTableOptions } from "./route-table.js";
export { createRouteTable } from "./route-table.js";
export type { XdsTransportInternals } from "./xds-transport.js";
export { createXdsTransportWithInternals } from "./xds-transport.js";
