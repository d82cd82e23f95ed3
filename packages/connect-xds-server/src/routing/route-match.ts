// A route's match on the server (A36: "routes are matched the same as on client-side", A28/A63), compiled once per
// route configuration into closures over the call's path and Node's request headers. Rules
// (docs/decisions.md#xds-enabled-servers):
// - the path is `:path` without its query string; `safe_regex` is a full match compiled by xds-client (the one
//   regex engine of every xDS regex), case-insensitive when `case_sensitive` is false (C-core, and the client);
// - a header matcher other than `present` never matches an absent header, inverted or not (C-core and grpc-go);
// - a header's value is what Node's HTTP/2 server hands over (it joins most repeated headers with ", "); an array
//   value is joined with ","; `-bin` headers never match as present; `content-type` reads `application/grpc`
//   whatever the wire content type (the Connect and gRPC-Web protocols included), as on the client;
// - `runtime_fraction` matches when a uniform draw in [0, 1e6) is below the fraction per million.
import type { HeaderMatcher, PathMatcher, RouteMatch } from "@xdskit/xds-client";
import { compileHeaderValueMatcher, compileRegex } from "@xdskit/xds-client/internal";

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
    case "safe_regex": {
      const regex = compileRegex(matcher.regex, { ignoreCase: !matcher.caseSensitive });
      return (path) => regex.fullMatch(path);
    }
  }
}

/**
 * One header matcher, as gRPC reads it: a matcher other than `present` never matches an absent header, `invert`
 * or not; the value tests (and every `safe_regex`) are xds-client's.
 */
export function compileHeaderMatcher(matcher: HeaderMatcher): HeaderPredicate {
  const name = matcher.name.toLowerCase();
  const test = compileHeaderValueMatcher(matcher);
  return (headers) => test(headerValue(headers, name));
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
