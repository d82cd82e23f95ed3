// A route's match (A28, A63), compiled once per config selector into closures that read the call's path and headers
// without allocating beyond the call. Rules as gRPC applies them (docs/decisions.md#connect-xds-route-matching):
// - safe_regex is RE2's full match, compiled once by xds-client's compileRegex (re2js: linear time, whatever the
//   pattern and the input; docs/decisions.md#regular-expressions-from-xds);
// - a header's value is `Headers.get(name)` (several values joined by ", "); `-bin` headers never match as present;
//   `content-type` reads `application/grpc`; a matcher other than `present` never matches an absent header, inverted
//   or not (C-core and grpc-go);
// - `runtime_fraction` matches when a uniform draw in [0, 1e6) is below the fraction per million.
import type { HeaderMatcher, PathMatcher, RouteMatch } from "@xdskit/xds-client";
import { compileHeaderValueMatcher, compileRegex } from "@xdskit/xds-client/internal";
import { intDraw } from "../shared/random.js";

export type HeaderPredicate = (headers: Headers) => boolean;
export type RouteMatcher = (path: string, headers: Headers, random: () => number) => boolean;

/** gRPC's view of a request header for matching: undefined when absent. */
export function headerValue(headers: Headers, name: string): string | undefined {
  if (name.endsWith("-bin")) return undefined;
  if (name === "content-type") return "application/grpc";
  return headers.get(name) ?? undefined;
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
 * One header matcher, read from the call's headers by xds-client's compileHeaderValueMatcher (the server's too, so
 * both sides match alike): a matcher other than `present` never matches an absent header, inverted or not.
 */
export function compileHeaderMatcher(matcher: HeaderMatcher): HeaderPredicate {
  const name = matcher.name.toLowerCase();
  const test = compileHeaderValueMatcher(matcher);
  return (headers) => test(headerValue(headers, name));
}

/**
 * A route's match in two parts: the path matcher (a pure function of the path, so its answers may be cached per
 * path), then the rest (every header matcher, then the runtime fraction, which draws from `random`).
 */
export function compileRouteMatchParts(match: RouteMatch): {
  readonly path: (path: string) => boolean;
  readonly rest: (headers: Headers, randomInt: (bound: number) => number) => boolean;
} {
  const headers = match.headers.map(compileHeaderMatcher);
  const fraction = match.fractionPerMillion;
  const rest =
    headers.length === 0 && fraction === undefined
      ? () => true
      : (callHeaders: Headers, randomInt: (bound: number) => number) => {
          for (let i = 0; i < headers.length; i++) if (!headers[i]!(callHeaders)) return false;
          return fraction === undefined || randomInt(1_000_000) < fraction;
        };
  return { path: compilePathMatcher(match.path), rest };
}

/** A route's full match: path, every header matcher, then the runtime fraction. */
export function compileRouteMatch(match: RouteMatch): RouteMatcher {
  const { path, rest } = compileRouteMatchParts(match);
  return (callPath, callHeaders, random) => path(callPath) && rest(callHeaders, intDraw(random));
}

/**
 * gRPC's virtual-host choice: the domain pattern that best matches `host` (exact, then the longest suffix `*x`, the
 * longest prefix `x*`, then `*`); case-insensitive. Returns the index of the virtual host, or -1.
 */
export function findVirtualHost(
  host: string,
  virtualHosts: readonly { readonly domains: readonly string[] }[],
): number {
  const target = host.toLowerCase();
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
