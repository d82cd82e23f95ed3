// The config selector (A31's shape): once per call, the route that applies and everything the rest of the call path
// reads from it. A selector is built from one Listener + RouteConfiguration; each of its results is built with it,
// so selecting allocates nothing (docs/architecture.md#connect-xds-call-path).
import type { ConnectError } from "@connectrpc/connect";
import type { FilterConfigOverride, HashPolicy, HttpFilter, RetryPolicy, Route, VirtualHost } from "@xdskit/xds-client";

/** One HTTP filter of the Listener's chain as it applies to a route's calls (A39). */
export interface RouteFilter {
  readonly filter: HttpFilter;
  /**
   * The most specific `typed_per_filter_config` entry for this filter: the weighted cluster's, else the route's,
   * else the virtual host's; absent when none has one.
   */
  readonly override?: FilterConfigOverride;
}

/** The per-call result of the config selector: the route, the cluster chosen for this call and the route's policies. */
export interface RouteSelection {
  /** The CDS cluster this call goes to (for `weighted_clusters`, the one picked for this call). */
  readonly cluster: string;
  readonly route: Route;
  readonly virtualHost: VirtualHost;
  /** A42: the route's hash policies (empty: none). */
  readonly hashPolicies: readonly HashPolicy[];
  /** A44: the route's retry policy, else the virtual host's. */
  readonly retryPolicy?: RetryPolicy;
  /**
   * A31: the route's `max_stream_duration` (`grpc_timeout_header_max` first), else the Listener's
   * `common_http_protocol_options.max_stream_duration`; absent: no limit from xDS.
   */
  readonly maxStreamDurationMs?: number;
  /** The Listener's HTTP filters except the router, each with its override for this route and cluster. */
  readonly filters: readonly RouteFilter[];
}

/** Chooses the route of each call. Built by the resolver for each Listener/RouteConfiguration pair. */
export interface ConfigSelector {
  /**
   * The route for a call to `path` (`/package.Service/Method`) with these request headers, or the error to fail it
   * with (UNAVAILABLE: no route matched, or the route's action is not supported). Never throws.
   */
  select(path: string, headers: Headers): RouteSelection | ConnectError;
  /** Every cluster some route of this selector may choose. */
  readonly clusters: ReadonlySet<string>;
}
