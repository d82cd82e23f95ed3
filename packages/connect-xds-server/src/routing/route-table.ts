// A route configuration compiled for one filter chain: each virtual host's routes, and for each route the checks of
// the chain's HTTP filters with the route's overrides resolved (A39: the route's `typed_per_filter_config` entry for
// the filter's name, else the virtual host's, else the filter's own config). A call then runs, in order: the virtual
// host choice by `:authority`, the first route that matches, the check that the route's action is
// `non_forwarding_action` (A36), then that route's filter checks. A call that matches no virtual host, no route, or a
// route with another action fails UNAVAILABLE before any filter runs, as grpc-go and C-core order it (their routing
// step comes before the RBAC filter).
import { Code } from "@connectrpc/connect";
import type {
  FilterConfigOverride,
  FilterConfigOverrides,
  ServerHttpFilter,
  ServerHttpFilterConfig,
  VirtualHost,
} from "@xdskit/xds-client";
import { compileRouteMatch, findVirtualHost, type RequestHeaders } from "./route-match.js";
import type { CallDenial, CallFilter, CallView, ServerFilterRegistry } from "./server-filters.js";

export interface RouteTable {
  /** The checks of one call: undefined lets it through to the service, else the status it ends with. */
  decide(call: CallView, authority: string): CallDenial | undefined;
  /** Routes whose action is not `non_forwarding_action` (A36's configuration error logging), as `vhost/route`. */
  readonly forwardingRoutes: readonly string[];
}

export interface RouteTableOptions {
  /** An RDS resource's or an inline `route_config`'s virtual hosts. */
  readonly routes: { readonly virtualHosts: readonly VirtualHost[] };
  /** The chain's HttpConnectionManager filters, in order (the router last). */
  readonly httpFilters: readonly ServerHttpFilter[];
  readonly registry: ServerFilterRegistry;
  /** Named in the UNAVAILABLE messages, as gRPC does. */
  readonly nodeId: string;
  /** Uniform in [0, 1), for `runtime_fraction`. */
  readonly random: () => number;
}

interface CompiledRoute {
  readonly matches: (path: string, headers: RequestHeaders) => boolean;
  readonly filters: readonly CallFilter[];
  /** Set when the route's action is not `non_forwarding_action`: the denial every call that reaches it gets. */
  readonly denial?: CallDenial;
}

interface CompiledVirtualHost {
  readonly routes: readonly CompiledRoute[];
  readonly noRoute: CallDenial;
}

/** Authorities remembered per table; past this the memo starts over (a client may send any authority). */
const AUTHORITY_MEMO_SIZE = 64;

function filterChecks(
  httpFilters: readonly ServerHttpFilter[],
  overrides: readonly FilterConfigOverrides[],
  registry: ServerFilterRegistry,
): readonly CallFilter[] {
  const checks: CallFilter[] = [];
  for (const filter of httpFilters) {
    // The route's entry, else the virtual host's: a disabled one turns the filter off, any other turns a filter
    // disabled in the HttpConnectionManager on (grpc-go's reading of Envoy's `disabled`).
    let override: FilterConfigOverride | undefined;
    for (const map of overrides) {
      override = map[filter.name];
      if (override !== undefined) break;
    }
    if (override === undefined ? filter.disabled : override.disabled) continue;
    const config: ServerHttpFilterConfig = override?.parsed ?? filter.filter;
    const factory = registry.get(config.type);
    if (factory === undefined) {
      // xds-client only produces configs of registered types; a gap here is a bug, and failing closed is safe.
      const message = `HTTP filter "${filter.name}" has no server implementation (${config.type})`;
      checks.push(() => ({ code: Code.Unavailable, message }));
      continue;
    }
    const check = factory(config, filter.name);
    if (check !== undefined) checks.push(check);
  }
  return checks;
}

function runChecks(checks: readonly CallFilter[], call: CallView): CallDenial | undefined {
  for (let i = 0; i < checks.length; i++) {
    const denial = checks[i]!(call);
    if (denial !== undefined) return denial;
  }
  return undefined;
}

export function compileRouteTable(options: RouteTableOptions): RouteTable {
  const { httpFilters, registry, nodeId } = options;
  const unavailable = (why: string): CallDenial => ({
    code: Code.Unavailable,
    message: `${why} (xDS node ID "${nodeId}")`,
  });
  const forwardingRoutes: string[] = [];
  const virtualHosts: CompiledVirtualHost[] = options.routes.virtualHosts.map((vh) => ({
    routes: vh.routes.map((route, index): CompiledRoute => {
      const matches = compileRouteMatch(route.match, options.random);
      if (route.action.type === "non_forwarding") {
        const filters = filterChecks(httpFilters, [route.typedPerFilterConfig, vh.typedPerFilterConfig], registry);
        return { matches, filters };
      }
      const label = `${vh.name}/${route.name === "" ? `#${index}` : route.name}`;
      forwardingRoutes.push(label);
      return {
        matches,
        filters: [],
        denial: unavailable(`the call matched route ${label}, whose action is not non_forwarding_action`),
      };
    }),
    noRoute: unavailable(`the call matched no route of virtual host ${vh.name}`),
  }));
  const noVirtualHost = unavailable("the call's authority matched no virtual host");
  const memo = new Map<string, CompiledVirtualHost | null>();

  function virtualHostFor(authority: string): CompiledVirtualHost | null {
    let vh = memo.get(authority);
    if (vh === undefined) {
      const index = findVirtualHost(authority, options.routes.virtualHosts);
      vh = index < 0 ? null : virtualHosts[index]!;
      if (memo.size >= AUTHORITY_MEMO_SIZE) memo.clear();
      memo.set(authority, vh);
    }
    return vh;
  }

  return {
    forwardingRoutes,
    decide(call, authority) {
      const vh = virtualHostFor(authority);
      if (vh === null) return noVirtualHost;
      const routes = vh.routes;
      for (let i = 0; i < routes.length; i++) {
        const route = routes[i]!;
        if (!route.matches(call.path, call.headers)) continue;
        return route.denial ?? runChecks(route.filters, call);
      }
      return vh.noRoute;
    },
  };
}
