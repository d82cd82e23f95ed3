// A39's HTTP filters on the server: what each filter of a chain's HttpConnectionManager does to a call. xds-client
// validated each filter's config (and each `RBACPerRoute` override) into a `ServerHttpFilterConfig`; the registry
// here turns a config into the check the call runs, once per route at configuration time, so a call only runs
// closures. The router is terminal and runs nothing here: the route's action is checked after every filter.
import { Code } from "@connectrpc/connect";
import {
  compileRbac,
  evaluateRbac,
  type RbacLocal,
  type RbacPeer,
  type ServerHttpFilterConfig,
} from "@xdskit/xds-client";
import type { RequestHeaders } from "./route-match.js";

/** What a filter reads of a call. The shape is A41's `RbacRequest`, so the RBAC engine reads it as is. */
export interface CallView {
  /** `/package.Service/Method`, without a query string. */
  readonly path: string;
  readonly headers: RequestHeaders;
  readonly peer: RbacPeer;
  readonly local: RbacLocal;
}

/** How a call that a filter (or the routing) stops ends, before it reaches the service. */
export interface CallDenial {
  readonly code: Code;
  readonly message: string;
}

/** A filter's check for one route: undefined lets the call through. */
export type CallFilter = (call: CallView) => CallDenial | undefined;

/** Makes the check of one filter from its validated config; undefined when the filter lets every call through. */
export type ServerFilterFactory = (config: ServerHttpFilterConfig, filterName: string) => CallFilter | undefined;

/** The filter types a server runs, by `ServerHttpFilterConfig.type`. */
export type ServerFilterRegistry = ReadonlyMap<ServerHttpFilterConfig["type"], ServerFilterFactory>;

/** A41: the RBAC engine over the call; a denial is PERMISSION_DENIED with the engine's message. */
const rbacFilter: ServerFilterFactory = (config) => {
  if (config.type !== "rbac") return undefined;
  const compiled = compileRbac(config);
  if (compiled.action === "none") return undefined;
  return (call) => {
    const decision = evaluateRbac(compiled, call);
    return decision.allowed ? undefined : { code: Code.PermissionDenied, message: decision.message };
  };
};

/** The router (terminal: routes are checked after the filters) and RBAC. */
export const defaultServerFilters: ServerFilterRegistry = new Map<ServerHttpFilterConfig["type"], ServerFilterFactory>([
  ["router", () => undefined],
  ["rbac", rbacFilter],
]);
