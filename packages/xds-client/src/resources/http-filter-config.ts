// The validated config of the HTTP filters gRPC servers run (A39's registry, server side), shared by a server
// Listener's filters and the `typed_per_filter_config` overrides of its routes.
import type { RbacFilterConfig } from "./rbac-types.js";

/**
 * What a server runs for one HTTP filter: the router (terminal; routes carry `non_forwarding_action`) or RBAC (A41).
 * The server runs a chain's filters in order; an RBAC filter takes the most specific `RBACPerRoute` override of its
 * name (the route's, else the virtual host's) in place of its own config.
 */
export type ServerHttpFilterConfig = { readonly type: "router" } | ({ readonly type: "rbac" } & RbacFilterConfig);
