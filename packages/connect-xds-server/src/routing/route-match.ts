// A route's match on the server (A36: "routes are matched the same as on client-side", A28/A63), compiled once per
// route configuration into closures over the call's path and Node's request headers. Rules
// (docs/decisions.md#xds-enabled-servers):
// - the path is `:path` without its query string;
// - a header's value is what Node's HTTP/2 server hands over (it joins most repeated headers with ", "); an array
//   value is joined with ","; `-bin` headers never match as present; `content-type` reads `application/grpc`
//   whatever the wire content type (the Connect and gRPC-Web protocols included), as on the client;
// - `runtime_fraction` matches when a uniform draw in [0, 1e6) is below the fraction per million.
import type { HeaderMatcher, PathMatcher, RouteMatch } from "@xdskit/xds-client";
import { compileFullMatch } from "./full-match.js";

/** Request headers as Node's HTTP/2 server gives them: lower-case names, pseudo-headers included. */
export type RequestHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

export type HeaderPredicate = (headers: RequestHeaders) => boolean;

/** gRPC's view of a request header for matching: undefined when absent. */
export function headerValue(headers: RequestHeaders, name: string): string | undefined {
  if (name.endsWith("-bin")) return undefined;
  if (name === "content-type") return "application/grpc";
  const value = headers[name];
  if (value === undefined || typeof value === "string") return value;
  return value.join(",");
}

export function compilePathMatcher(matcher: PathMatcher): (path: string) => boolean {
  switch (matcher.type) {
    case "prefix": {
      const prefix = matcher.value;
      if (prefix === "") return () => true;
      if (matcher.caseSensitive) return (path) => path.startsWith(prefix);
      const lower = prefix.toLowerCase();
      return (path) => path.length >= lower.length && path.slice(0, lower.length).toLowerCase() === lower;
    }
    case "path": {
      const exact = matcher.value;
      if (matcher.caseSensitive) return (path) => path === exact;
      const lower = exact.toLowerCase();
      return (path) => path.length === lower.length && path.toLowerCase() === lower;
    }
    case "safe_regex":
      return compileFullMatch(matcher.regex, !matcher.caseSensitive);
  }
}

const INTEGER = /^[+-]?[0-9]+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** `[start, end)` on a header holding a base-10 int64; values outside int64 never match. */
function rangePredicate(start: bigint, end: bigint): (value: string) => boolean {
  return (value) => {
    if (!INTEGER.test(value)) return false;
    const big = BigInt(value);
    if (big < INT64_MIN || big > INT64_MAX) return false;
    return big >= start && big < end;
  };
}

function stringPredicate(
  type: "exact" | "prefix" | "suffix" | "contains",
  expected: string,
  ignoreCase: boolean,
): (value: string) => boolean {
  const want = ignoreCase ? expected.toLowerCase() : expected;
  const norm = ignoreCase ? (value: string) => value.toLowerCase() : (value: string) => value;
  switch (type) {
    case "exact":
      return (value) => norm(value) === want;
    case "prefix":
      return (value) => norm(value).startsWith(want);
    case "suffix":
      return (value) => norm(value).endsWith(want);
    case "contains":
      return (value) => norm(value).includes(want);
  }
}

/** One header matcher: the value test, then `invert_match` (which also inverts "absent"). */
export function compileHeaderMatcher(matcher: HeaderMatcher): HeaderPredicate {
  const name = matcher.name.toLowerCase();
  const invert = matcher.invert;
  if (matcher.type === "present") {
    const present = matcher.present;
    return (headers) => ((headerValue(headers, name) !== undefined) === present) !== invert;
  }
  let test: (value: string) => boolean;
  switch (matcher.type) {
    case "safe_regex":
      test = compileFullMatch(matcher.regex, false);
      break;
    case "range":
      test = rangePredicate(matcher.start, matcher.end);
      break;
    default:
      test = stringPredicate(matcher.type, matcher.value, matcher.ignoreCase);
  }
  return (headers) => {
    const value = headerValue(headers, name);
    if (value === undefined) return invert;
    return test(value) !== invert;
  };
}

/** A route's full match: path, every header matcher, then the runtime fraction (drawn from `random`, in [0, 1)). */
export function compileRouteMatch(
  match: RouteMatch,
  random: () => number,
): (path: string, headers: RequestHeaders) => boolean {
  const path = compilePathMatcher(match.path);
  const headers = match.headers.map(compileHeaderMatcher);
  const fraction = match.fractionPerMillion;
  if (headers.length === 0 && fraction === undefined) return path;
  return (callPath, callHeaders) => {
    if (!path(callPath)) return false;
    for (let i = 0; i < headers.length; i++) if (!headers[i]!(callHeaders)) return false;
    return fraction === undefined || Math.floor(random() * 1_000_000) < fraction;
  };
}

/**
 * gRPC's virtual-host choice: the domain pattern that best matches `authority` (exact, then the longest suffix `*x`,
 * the longest prefix `x*`, then `*`), case-insensitively; the first virtual host wins a tie. Returns its index, or -1.
 */
export function findVirtualHost(
  authority: string,
  virtualHosts: readonly { readonly domains: readonly string[] }[],
): number {
  const target = authority.toLowerCase();
  let best = -1;
  let bestRank = 0;
  let bestLength = -1;
  for (let i = 0; i < virtualHosts.length; i++) {
    for (const raw of virtualHosts[i]!.domains) {
      const domain = raw.toLowerCase();
      let rank: number;
      let matched: boolean;
      if (domain === "*") {
        rank = 1;
        matched = true;
      } else if (domain.startsWith("*")) {
        rank = 3;
        matched = target.endsWith(domain.slice(1));
      } else if (domain.endsWith("*")) {
        rank = 2;
        matched = target.startsWith(domain.slice(0, -1));
      } else {
        rank = 4;
        matched = domain === target;
      }
      if (!matched) continue;
      if (rank > bestRank || (rank === bestRank && domain.length > bestLength)) {
        best = i;
        bestRank = rank;
        bestLength = domain.length;
      }
    }
  }
  return best;
}
