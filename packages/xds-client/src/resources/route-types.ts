import type { RouteConfiguration } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import type { TypedConfig } from "./extension.js";
import type { ServerHttpFilterConfig } from "./http-filter-config.js";
import type { HeaderMatcher, PathMatcher } from "./matchers.js";

/** A `typed_per_filter_config` entry: the override config for the HTTP filter instance of that name. */
export interface FilterConfigOverride {
  /** The override as sent; for a disabled one, the `FilterConfig` wrapper itself (its config is not read). */
  readonly config: TypedConfig;
  /** From an `envoy.config.route.v3.FilterConfig` wrapper. */
  readonly isOptional: boolean;
  /** The filter is off in this scope (a `FilterConfig` wrapper's `disabled`). */
  readonly disabled: boolean;
  /** The validated override of a filter gRPC servers run (`RBACPerRoute`); absent for the other filters. */
  readonly parsed?: ServerHttpFilterConfig;
}

export type FilterConfigOverrides = Readonly<Record<string, FilterConfigOverride>>;

/** The status codes A44 retries on (`retry_on` entries gRPC knows; others are ignored). */
export type RetryableCode = "CANCELLED" | "DEADLINE_EXCEEDED" | "INTERNAL" | "RESOURCE_EXHAUSTED" | "UNAVAILABLE";

/** A44 retry policy, defaults applied. An empty `retryOn` means no retries. */
export interface RetryPolicy {
  readonly retryOn: readonly RetryableCode[];
  readonly numRetries: number;
  readonly baseIntervalMs: number;
  readonly maxIntervalMs: number;
}

/** A42 hash policy: hash a header (optionally regex-rewritten) or the channel ID. */
export type HashPolicy =
  | {
      readonly type: "header";
      readonly headerName: string;
      readonly regex?: string;
      readonly regexSubstitution?: string;
      readonly terminal: boolean;
    }
  | { readonly type: "channel_id"; readonly terminal: boolean };

export interface WeightedClusterEntry {
  readonly name: string;
  readonly weight: number;
  readonly typedPerFilterConfig: FilterConfigOverrides;
}

export interface ForwardingFields {
  readonly hashPolicies: readonly HashPolicy[];
  /** The route's retry policy, else the virtual host's. */
  readonly retryPolicy?: RetryPolicy;
  /** A31: `max_stream_duration.grpc_timeout_header_max`, else `max_stream_duration.max_stream_duration`. */
  readonly maxStreamDurationMs?: number;
  /** `RouteAction.timeout` when set and well-formed (gRPC itself uses `maxStreamDurationMs`). */
  readonly timeoutMs?: number;
  /** Only honoured from a server marked `trusted_xds_server`. */
  readonly autoHostRewrite: boolean;
}

export type RouteAction =
  | (ForwardingFields & { readonly type: "cluster"; readonly cluster: string })
  | (ForwardingFields & {
      readonly type: "weighted_clusters";
      readonly weightedClusters: readonly WeightedClusterEntry[];
      readonly totalWeight: number;
    })
  | (ForwardingFields & { readonly type: "cluster_specifier_plugin"; readonly clusterSpecifierPlugin: string })
  | { readonly type: "non_forwarding" }
  /** redirect, direct_response, filter_action or no action: RPCs matching it fail. */
  | { readonly type: "unsupported" };

export interface RouteMatch {
  readonly path: PathMatcher;
  readonly headers: readonly HeaderMatcher[];
  /** `runtime_fraction.default_value` normalised to parts per million. */
  readonly fractionPerMillion?: number;
}

export interface Route {
  readonly name: string;
  readonly match: RouteMatch;
  readonly action: RouteAction;
  readonly typedPerFilterConfig: FilterConfigOverrides;
}

export interface VirtualHost {
  readonly name: string;
  readonly domains: readonly string[];
  readonly routes: readonly Route[];
  readonly typedPerFilterConfig: FilterConfigOverrides;
  readonly retryPolicy?: RetryPolicy;
}

/** What a RouteConfiguration (or a Listener's inline `route_config`) configures. */
export interface RouteConfigurationBody {
  readonly virtualHosts: readonly VirtualHost[];
  /** Plugins referenced by some route, by name (unreferenced ones are left out, as gRPC does). */
  readonly clusterSpecifierPlugins: Readonly<Record<string, TypedConfig>>;
}

export interface RouteConfigurationUpdate extends RouteConfigurationBody {
  readonly name: string;
  /** The decoded message (non-enumerable). */
  readonly raw: RouteConfiguration;
}
