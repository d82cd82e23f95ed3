// The validated form of the RBAC HTTP filter's configuration (A41): what the decoders produce from
// `envoy.extensions.filters.http.rbac.v3.RBAC` (a Listener's HTTP filter) and `RBACPerRoute` (a virtual host's or
// route's `typed_per_filter_config`). Plain frozen data; `compileRbac` (mesh/rbac-engine.ts) turns it into the form
// `evaluateRbac` runs per call.
import type { CidrRange } from "../shared/ip-address.js";
import type { HeaderMatcher, StringMatcher } from "./matchers.js";

/**
 * What a permission or a principal tests, as a tree (envoy's `Permission` / `Principal` oneofs, A41's reading):
 * - `any`: always true;
 * - `and` / `or` over `rules`, `not` of one `rule`;
 * - `header`: a header matcher over the call's headers (A41: multiple values joined with `,`; `:method` reads `POST`
 *   when absent; `te` never present; `host` and `:authority` are one header; `:path` is the call's path);
 * - `url_path`: a string matcher over the call's path (`/package.Service/Method`);
 * - `destination_ip` (permission) / `source_ip`, `direct_remote_ip`, `remote_ip` (principal, all three the peer's
 *   address, A41): the address is in the range (IPv4-mapped IPv6 addresses count as IPv4);
 * - `destination_port`: the local port is in `[start, end)` (`destination_port` N is `[N, N+1)`; envoy's
 *   `destination_port_range` as written);
 * - `requested_server_name`: the matcher applied to `""` (gRPC has no SNI here, A41);
 * - `metadata`: envoy dynamic metadata, which gRPC never has: never true, or always true when `invert` (A41, as
 *   grpc-go reads `MetadataMatcher.invert`);
 * - `authenticated`: the connection is TLS and, when `principalName` is set, one of the peer's principal names
 *   matches (see `RbacPeer.principalNames`).
 */
export type RbacRule =
  | { readonly type: "any" }
  | { readonly type: "and" | "or"; readonly rules: readonly RbacRule[] }
  | { readonly type: "not"; readonly rule: RbacRule }
  | { readonly type: "header"; readonly header: HeaderMatcher }
  | { readonly type: "url_path"; readonly path: StringMatcher }
  | { readonly type: "destination_ip" | "source_ip"; readonly range: CidrRange }
  | { readonly type: "destination_port"; readonly start: number; readonly end: number }
  | { readonly type: "requested_server_name"; readonly matches: boolean }
  | { readonly type: "metadata"; readonly invert: boolean }
  | { readonly type: "authenticated"; readonly principalName?: StringMatcher };

/**
 * One named policy: it matches a call when one of its permissions and one of its principals match (so a policy with
 * no permissions or no principals never matches, as in gRPC; an empty `and` is true, an empty `or` false).
 */
export interface RbacPolicy {
  readonly name: string;
  readonly permissions: readonly RbacRule[];
  readonly principals: readonly RbacRule[];
}

/**
 * `envoy.config.rbac.v3.RBAC` as gRPC applies it. `ALLOW`: a call is allowed when some policy matches (no policy: every
 * call denied). `DENY`: a call is denied when some policy matches. `LOG` is refused at decoding
 * (docs/decisions.md#rbac-log-action).
 */
export interface RbacRules {
  readonly action: "ALLOW" | "DENY";
  /** Sorted by name. */
  readonly policies: readonly RbacPolicy[];
}

/**
 * One RBAC filter's config (top level or a per-route override): `rules` absent means the filter lets every call
 * through (an RBAC filter without `rules`, or an `RBACPerRoute` without `rbac`).
 */
export interface RbacFilterConfig {
  readonly rules?: RbacRules;
}
