// Builds a config selector from one virtual host: each route's matcher compiled, each (route, cluster) result built
// once, weighted clusters as cumulative weights. `select` then allocates only for failed calls' errors.
import { Code, ConnectError } from "@connectrpc/connect";
import type { FilterConfigOverrides, HttpFilter, Route, VirtualHost } from "@xdskit/xds-client";
import type { ConfigSelector, RouteFilter, RouteSelection } from "../balancer/config-selector.js";
import { compileHashPolicies } from "../policies/hash-policy.js";
import { intDraw } from "../shared/random.js";
import { compileRouteMatchParts } from "./route-match.js";

const ROUTER_FILTER = "envoy.extensions.filters.http.router.v3.Router";

export interface RouteTableOptions {
  readonly virtualHost: VirtualHost;
  /** The Listener's HTTP filter chain (the router last). */
  readonly httpFilters: readonly HttpFilter[];
  /** The Listener's `max_stream_duration`, for routes without their own. */
  readonly listenerMaxStreamDurationMs?: number;
  /** Named in every error, as gRPC does. */
  readonly nodeId: string;
  /** Uniform in [0, 1). */
  readonly random: () => number;
}

interface CompiledRoute {
  readonly matchesPath: (path: string) => boolean;
  readonly matchesRest: (headers: Headers, randomInt: (bound: number) => number) => boolean;
  /** One entry per cluster; for a single cluster, one entry with weight 1. */
  readonly selections: readonly RouteSelection[];
  /** Cumulative weights, same length as `selections`. */
  readonly cumulative: readonly number[];
  readonly totalWeight: number;
  /** Set when the route cannot carry calls. */
  readonly unsupported?: string;
}

function filtersFor(
  httpFilters: readonly HttpFilter[],
  overrides: readonly FilterConfigOverrides[],
): readonly RouteFilter[] {
  const result: RouteFilter[] = [];
  for (const filter of httpFilters) {
    if (filter.config.type === ROUTER_FILTER) continue;
    let override: RouteFilter["override"];
    for (const map of overrides) {
      override = map[filter.name];
      if (override !== undefined) break;
    }
    // A disabled entry turns the filter off here; any other turns on a filter the HttpConnectionManager disabled.
    if (override === undefined ? filter.disabled : override.disabled) continue;
    result.push(Object.freeze(override === undefined ? { filter } : { filter, override }));
  }
  return Object.freeze(result);
}

function compileRoute(route: Route, options: RouteTableOptions): CompiledRoute {
  const { virtualHost, httpFilters } = options;
  const { path: matchesPath, rest: matchesRest } = compileRouteMatchParts(route.match);
  const action = route.action;
  if (action.type !== "cluster" && action.type !== "weighted_clusters") {
    const why =
      action.type === "cluster_specifier_plugin"
        ? `cluster_specifier_plugin "${action.clusterSpecifierPlugin}" is not supported`
        : action.type === "non_forwarding"
          ? "non_forwarding_action is for servers"
          : "the route has no supported action";
    return { matchesPath, matchesRest, selections: [], cumulative: [], totalWeight: 0, unsupported: why };
  }
  // Compiled now (kept with the route's list), so that no call compiles a regex_rewrite.
  compileHashPolicies(action.hashPolicies);
  const maxStreamDurationMs = action.maxStreamDurationMs ?? options.listenerMaxStreamDurationMs;
  const base = {
    route,
    virtualHost,
    hashPolicies: action.hashPolicies,
    ...(action.retryPolicy === undefined ? {} : { retryPolicy: action.retryPolicy }),
    ...(maxStreamDurationMs === undefined ? {} : { maxStreamDurationMs }),
  };
  const entries =
    action.type === "cluster"
      ? [{ name: action.cluster, weight: 1, typedPerFilterConfig: undefined }]
      : action.weightedClusters;
  const selections: RouteSelection[] = [];
  const cumulative: number[] = [];
  let total = 0;
  for (const entry of entries) {
    const overrides = [entry.typedPerFilterConfig, route.typedPerFilterConfig, virtualHost.typedPerFilterConfig];
    selections.push(
      Object.freeze({
        ...base,
        cluster: entry.name,
        filters: filtersFor(
          httpFilters,
          overrides.filter((map): map is FilterConfigOverrides => map !== undefined),
        ),
      }),
    );
    total += entry.weight;
    cumulative.push(total);
  }
  return { matchesPath, matchesRest, selections, cumulative, totalWeight: total };
}

/** Distinct call paths whose candidate routes a selector remembers; further paths are matched route by route. */
export const MAX_CACHED_PATHS = 1024;

/**
 * The config selector of one virtual host. Path matchers depend on the path alone, so the routes whose path matcher
 * accepts a path are computed once per path (at most MAX_CACHED_PATHS paths) and a call only runs the header
 * matchers and fractions of those, in route order: the same routes, in the same order, with the same random draws
 * as matching every route in turn (`select` with `useCache: false`; a property test compares the two).
 */
export function createRouteTable(options: RouteTableOptions & { readonly useCache?: boolean }): ConfigSelector {
  const routes = options.virtualHost.routes.map((route) => compileRoute(route, options));
  const clusters = new Set<string>();
  for (const route of routes) for (const selection of route.selections) clusters.add(selection.cluster);
  const { nodeId } = options;
  const random = intDraw(options.random);
  const useCache = options.useCache ?? true;
  const byPath = new Map<string, readonly CompiledRoute[]>();
  const remember = (path: string): readonly CompiledRoute[] => {
    const list = routes.filter((route) => route.matchesPath(path));
    if (byPath.size < MAX_CACHED_PATHS) byPath.set(path, list);
    return list;
  };
  // No closure in here: one that captured `path` would put it in a context allocated on every call, which the JIT
  // removes only while this is the only route table (its code specialised to one closure); a second transport or
  // selector would then allocate on each pick.
  const candidates = (path: string): readonly CompiledRoute[] => byPath.get(path) ?? remember(path);
  const choose = (route: CompiledRoute): RouteSelection | ConnectError => {
    if (route.unsupported !== undefined) {
      return new ConnectError(`matched route: ${route.unsupported} (xDS node ID "${nodeId}")`, Code.Unavailable);
    }
    const selections = route.selections;
    if (selections.length === 1) return selections[0]!;
    // A28: a uniform draw over the total weight; the first cluster whose cumulative weight exceeds it.
    const draw = random(route.totalWeight);
    const cumulative = route.cumulative;
    for (let j = 0; j < cumulative.length; j++) if (draw < cumulative[j]!) return selections[j]!;
    return selections[selections.length - 1]!;
  };
  const noMatch = (path: string) =>
    new ConnectError(`no route matched the call to ${path} (xDS node ID "${nodeId}")`, Code.Unavailable);
  return {
    clusters,
    select: useCache
      ? (path, headers) => {
          const list = candidates(path);
          for (let i = 0; i < list.length; i++) {
            const route = list[i]!;
            if (route.matchesRest(headers, random)) return choose(route);
          }
          return noMatch(path);
        }
      : (path, headers) => {
          for (let i = 0; i < routes.length; i++) {
            const route = routes[i]!;
            if (route.matchesPath(path) && route.matchesRest(headers, random)) return choose(route);
          }
          return noMatch(path);
        },
  };
}
