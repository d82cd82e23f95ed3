// @xdskit/connect-xds: a Connect transport routed by xDS (gRFC A27, A28). Grouped by audience (import sorting is
// off for this file): end users first, then people writing load-balancing policies.
export const PACKAGE_NAME = "@xdskit/connect-xds";
