import type { Any } from "@bufbuild/protobuf/wkt";
import type { RouteConfiguration } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import {
  type ClusterSpecifierPluginView as ClusterSpecifierPluginProto,
  FilterConfigViewReader,
  type RetryPolicyView as RetryPolicyProto,
  type RouteActionView as RouteActionProto,
  type RouteMatchView as RouteMatchProto,
  type RouteView as RouteProto,
} from "../gen/envoy/config/route/v3/route_components_view.js";
import { type RouteConfigurationView, RouteConfigurationViewReader } from "../gen/envoy/config/route/v3/route_view.js";
import type { AnyView } from "../gen/google/protobuf/any_view.js";
import { compileRegex, compileRewrite, RegexError } from "../shared/regex.js";
import type { DecodeContext, DecodeResult, ResourceType } from "../wire/resource-type.js";
import { decodeResource, type ResourceMessage } from "./decode-view.js";
import { parseDurationMs } from "./duration.js";
import { decodeExtension, extractExtension, type TypedConfig, toTypedConfig } from "./extension.js";
import { perMillion } from "./fraction.js";
import type { ServerHttpFilterConfig } from "./http-filter-config.js";
import { httpFilterForOverrideType } from "./http-filters.js";
import {
  type HeaderMatcher,
  isValidDomainPattern,
  type PathMatcher,
  parseHeaderMatcher,
  regexProblem,
} from "./matchers.js";
import { EMPTY, fieldPath, UINT32_MAX, type ValidationErrors } from "./validation.js";

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

interface ForwardingFields {
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

const EMPTY_OVERRIDES: FilterConfigOverrides = Object.freeze({});
const FILTER_CONFIG_TYPE = "envoy.config.route.v3.FilterConfig";
const SUPPORTED_CLUSTER_SPECIFIER_PLUGINS = new Set(["grpc.lookup.v1.RouteLookupClusterSpecifier"]);
const RETRY_CODES: Readonly<Record<string, RetryableCode>> = {
  cancelled: "CANCELLED",
  "deadline-exceeded": "DEADLINE_EXCEEDED",
  internal: "INTERNAL",
  "resource-exhausted": "RESOURCE_EXHAUSTED",
  unavailable: "UNAVAILABLE",
};
/** Plugin table entry of an optional plugin this client does not support: routes using it are skipped. */
const OPTIONAL_UNSUPPORTED = null;

/** `typed_per_filter_config` (virtual host, route or weighted cluster) with gRPC's rules (A39). */
function parseFilterOverrides(
  map: { readonly [key: string]: AnyView },
  path: string,
  errors: ValidationErrors,
): FilterConfigOverrides {
  let result: Record<string, FilterConfigOverride> | undefined;
  for (const key in map) {
    const entryPath = `${path}[${key}]`;
    if (key === "") errors.add(entryPath, "filter name must be non-empty");
    let extension = extractExtension(map[key], entryPath, errors);
    if (extension === undefined) continue;
    let isOptional = false;
    let disabled = false;
    if (extension.type === FILTER_CONFIG_TYPE) {
      const wrapper = decodeExtension(extension, FilterConfigViewReader);
      if (wrapper === undefined) {
        errors.add(extension.path, "could not parse FilterConfig");
        continue;
      }
      isOptional = wrapper.isOptional;
      disabled = wrapper.disabled;
      if (disabled) {
        // The filter is off for this scope: its config, if any, is never used, so it is not validated (grpc-go).
        result ??= {};
        result[key] = Object.freeze({ config: toTypedConfig(extension), isOptional, disabled });
        continue;
      }
      extension = extractExtension(wrapper.config, `${extension.path}.config`, errors);
      if (extension === undefined) continue;
    }
    const kind = httpFilterForOverrideType(extension.type);
    if (kind === undefined) {
      if (!isOptional) errors.add(extension.path, "unsupported filter type");
      continue;
    }
    const parsed = kind.parseOverride?.(extension, errors);
    result ??= {};
    result[key] = Object.freeze(
      parsed === undefined
        ? { config: toTypedConfig(extension), isOptional, disabled }
        : { config: toTypedConfig(extension), isOptional, disabled, parsed },
    );
  }
  return result === undefined ? EMPTY_OVERRIDES : Object.freeze(result);
}

function parseRetryPolicy(proto: RetryPolicyProto, path: string, errors: ValidationErrors): RetryPolicy {
  const codes = new Set<RetryableCode>();
  for (const item of proto.retryOn.split(",")) {
    const code = RETRY_CODES[item.trim().toLowerCase()];
    if (code !== undefined) codes.add(code);
  }
  const numRetries = proto.numRetries ?? 1;
  if (numRetries === 0) errors.add(fieldPath(path, "num_retries"), "must be greater than 0");
  let baseIntervalMs = 25;
  let maxIntervalMs = 250;
  const backOff = proto.retryBackOff;
  if (backOff !== undefined) {
    const backOffPath = fieldPath(path, "retry_back_off");
    if (backOff.baseInterval === undefined) {
      errors.add(`${backOffPath}.base_interval`, "field not present");
    } else {
      const before = errors.count;
      baseIntervalMs = parseDurationMs(backOff.baseInterval, `${backOffPath}.base_interval`, errors);
      if (before === errors.count && baseIntervalMs === 0) {
        errors.add(`${backOffPath}.base_interval`, "must be greater than 0");
      }
    }
    if (backOff.maxInterval === undefined) {
      maxIntervalMs = 10 * baseIntervalMs;
    } else {
      const before = errors.count;
      maxIntervalMs = parseDurationMs(backOff.maxInterval, `${backOffPath}.max_interval`, errors);
      if (before === errors.count && maxIntervalMs === 0) {
        errors.add(`${backOffPath}.max_interval`, "must be greater than 0");
      }
    }
  }
  return Object.freeze({ retryOn: Object.freeze([...codes].sort()), numRetries, baseIntervalMs, maxIntervalMs });
}

/** A prefix that can match some `/service/method` path (else gRPC ignores the route). */
function isUsablePrefix(prefix: string): boolean {
  if (prefix === "") return true;
  if (prefix[0] !== "/") return false;
  const parts = prefix.slice(1).split("/", 3);
  if (parts.length > 2) return false;
  return !(parts.length === 2 && parts[0] === "");
}

/** A path of the exact form `/service/method` (else gRPC ignores the route). */
function isUsablePath(path: string): boolean {
  if (path === "" || path[0] !== "/") return false;
  const parts = path.slice(1).split("/", 3);
  return parts.length === 2 && parts[0] !== "" && parts[1] !== "";
}

/** Returns undefined when the route is to be ignored (possibly after reporting an error). */
function parseRouteMatch(proto: RouteMatchProto, path: string, errors: ValidationErrors): RouteMatch | undefined {
  if (proto.queryParameters.length > 0) return undefined;
  const caseSensitive = proto.caseSensitive ?? true;
  let pathMatcher: PathMatcher;
  const spec = proto.pathSpecifier;
  switch (spec.case) {
    case "prefix":
      if (!isUsablePrefix(spec.value)) return undefined;
      pathMatcher = Object.freeze({ type: "prefix", value: spec.value, caseSensitive });
      break;
    case "path":
      if (!isUsablePath(spec.value)) return undefined;
      pathMatcher = Object.freeze({ type: "path", value: spec.value, caseSensitive });
      break;
    case "safeRegex": {
      const invalid = regexProblem(spec.value.regex, !caseSensitive);
      if (invalid !== undefined) {
        errors.add(`${path}.safe_regex.regex`, `error creating path matcher: invalid regex: ${invalid}`);
        return undefined;
      }
      pathMatcher = Object.freeze({ type: "safe_regex", regex: spec.value.regex, caseSensitive });
      break;
    }
    default:
      errors.add(path, "invalid path specifier");
      return undefined;
  }
  let headers: HeaderMatcher[] | undefined;
  for (let i = 0; i < proto.headers.length; i++) {
    const header = parseHeaderMatcher(proto.headers[i]!, `${path}.headers[${i}]`, errors);
    if (header === undefined) continue;
    headers ??= [];
    headers.push(header);
  }
  let fractionPerMillion: number | undefined;
  const fraction = proto.runtimeFraction?.defaultValue;
  if (fraction !== undefined) {
    fractionPerMillion = perMillion(
      fraction.numerator,
      fraction.denominator,
      `${path}.runtime_fraction.default_value.denominator`,
      errors,
    );
  }
  const headerList = headers === undefined ? EMPTY : Object.freeze(headers);
  return Object.freeze(
    fractionPerMillion === undefined
      ? { path: pathMatcher, headers: headerList }
      : { path: pathMatcher, headers: headerList, fractionPerMillion },
  );
}

function parseHashPolicies(proto: RouteActionProto, path: string, errors: ValidationErrors): readonly HashPolicy[] {
  if (proto.hashPolicy.length === 0) return EMPTY;
  const policies: HashPolicy[] = [];
  for (let i = 0; i < proto.hashPolicy.length; i++) {
    const policy = proto.hashPolicy[i]!;
    const spec = policy.policySpecifier;
    if (spec.case === "header") {
      const headerPath = `${path}.hash_policy[${i}].header`;
      const headerName = spec.value.headerName;
      if (headerName === "") errors.add(`${headerPath}.header_name`, "must be non-empty");
      const rewrite = spec.value.regexRewrite;
      if (rewrite === undefined) {
        policies.push(Object.freeze({ type: "header", headerName, terminal: policy.terminal }));
        continue;
      }
      if (rewrite.pattern === undefined) {
        errors.add(`${headerPath}.regex_rewrite.pattern`, "field not present");
        continue;
      }
      const regex = rewrite.pattern.regex;
      if (regex === "") {
        errors.add(`${headerPath}.regex_rewrite.pattern.regex`, "field not present");
        continue;
      }
      const invalid = rewriteProblem(regex, rewrite.substitution);
      if (invalid !== undefined) {
        errors.add(`${headerPath}.regex_rewrite.${invalid.field}`, invalid.message);
        continue;
      }
      policies.push(
        Object.freeze({
          type: "header",
          headerName,
          regex,
          regexSubstitution: rewrite.substitution,
          terminal: policy.terminal,
        }),
      );
    } else if (spec.case === "filterState" && spec.value.key === "io.grpc.channel_id") {
      policies.push(Object.freeze({ type: "channel_id", terminal: policy.terminal }));
    }
    // Any other policy type is ignored.
  }
  return Object.freeze(policies);
}

/** What RE2 refuses in a `regex_rewrite` (the pattern, or a substitution RE2::Rewrite cannot apply), and where. */
function rewriteProblem(
  regex: string,
  substitution: string,
): { readonly field: string; readonly message: string } | undefined {
  const invalid = regexProblem(regex);
  if (invalid !== undefined) return { field: "pattern.regex", message: `errors compiling regex: ${invalid}` };
  try {
    compileRewrite(compileRegex(regex), substitution);
    return undefined;
  } catch (error) {
    if (error instanceof RegexError) return { field: "substitution", message: error.message };
    throw error;
  }
}

interface ParseState {
  readonly context: DecodeContext;
  readonly errors: ValidationErrors;
  /** Plugin name → its config, or OPTIONAL_UNSUPPORTED. */
  readonly plugins: Map<string, TypedConfig | null>;
  readonly pluginsUsed: Set<string>;
}

/** Returns undefined when the route is to be ignored. */
function parseRouteAction(
  proto: RouteActionProto,
  path: string,
  vhostRetryPolicy: RetryPolicy | undefined,
  state: ParseState,
): RouteAction | undefined {
  const { errors } = state;
  let maxStreamDurationMs: number | undefined;
  const msd = proto.maxStreamDuration;
  if (msd !== undefined) {
    if (msd.grpcTimeoutHeaderMax !== undefined) {
      maxStreamDurationMs = parseDurationMs(
        msd.grpcTimeoutHeaderMax,
        `${path}.max_stream_duration.grpc_timeout_header_max`,
        errors,
      );
    } else if (msd.maxStreamDuration !== undefined) {
      maxStreamDurationMs = parseDurationMs(
        msd.maxStreamDuration,
        `${path}.max_stream_duration.max_stream_duration`,
        errors,
      );
    }
  }
  const hashPolicies = parseHashPolicies(proto, path, errors);
  const retryPolicy =
    proto.retryPolicy === undefined
      ? vhostRetryPolicy
      : parseRetryPolicy(proto.retryPolicy, `${path}.retry_policy`, errors);
  const autoHostRewrite =
    proto.hostRewriteSpecifier.case === "autoHostRewrite" &&
    proto.hostRewriteSpecifier.value.value &&
    state.context.server.trustedXdsServer;
  let timeoutMs: number | undefined;
  if (proto.timeout !== undefined && proto.timeout.seconds >= 0n && proto.timeout.nanos >= 0) {
    timeoutMs = Number(proto.timeout.seconds) * 1000 + proto.timeout.nanos / 1e6;
  }
  const common: ForwardingFields = {
    hashPolicies,
    autoHostRewrite,
    ...(retryPolicy === undefined ? {} : { retryPolicy }),
    ...(maxStreamDurationMs === undefined ? {} : { maxStreamDurationMs }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
  const spec = proto.clusterSpecifier;
  switch (spec.case) {
    case "cluster":
      if (spec.value === "") errors.add(`${path}.cluster`, "must be non-empty");
      return Object.freeze({ ...common, type: "cluster", cluster: spec.value });
    case "weightedClusters": {
      const wcPath = `${path}.weighted_clusters`;
      const entries: WeightedClusterEntry[] = [];
      let totalWeight = 0;
      const clusters = spec.value.clusters;
      for (let i = 0; i < clusters.length; i++) {
        const cluster = clusters[i]!;
        const entryPath = `${wcPath}.clusters[${i}]`;
        const typedPerFilterConfig = parseFilterOverrides(
          cluster.typedPerFilterConfig,
          `${entryPath}.typed_per_filter_config`,
          errors,
        );
        if (cluster.name === "") errors.add(`${entryPath}.name`, "must be non-empty");
        if (cluster.weight === undefined) {
          errors.add(`${entryPath}.weight`, "field not present");
        } else if (cluster.weight === 0) {
          continue;
        } else {
          totalWeight += cluster.weight;
        }
        entries.push(Object.freeze({ name: cluster.name, weight: cluster.weight ?? 0, typedPerFilterConfig }));
      }
      if (entries.length === 0) {
        errors.add(wcPath, "no valid clusters specified");
      } else if (totalWeight > UINT32_MAX) {
        errors.add(wcPath, "sum of cluster weights exceeds uint32 max");
      }
      return Object.freeze({
        ...common,
        type: "weighted_clusters",
        weightedClusters: Object.freeze(entries),
        totalWeight,
      });
    }
    case "clusterSpecifierPlugin": {
      const name = spec.value;
      const pluginPath = `${path}.cluster_specifier_plugin`;
      if (name === "") {
        errors.add(pluginPath, "must be non-empty");
        return undefined;
      }
      const plugin = state.plugins.get(name);
      if (plugin === undefined) {
        errors.add(pluginPath, `unknown cluster specifier plugin name "${name}"`);
      } else if (plugin === OPTIONAL_UNSUPPORTED) {
        return undefined;
      } else {
        state.pluginsUsed.add(name);
      }
      return Object.freeze({ ...common, type: "cluster_specifier_plugin", clusterSpecifierPlugin: name });
    }
    default:
      // cluster_header, an inline plugin or nothing: gRPC ignores the route.
      return undefined;
  }
}

const NON_FORWARDING: RouteAction = Object.freeze({ type: "non_forwarding" });
const UNSUPPORTED: RouteAction = Object.freeze({ type: "unsupported" });

function parseRoute(
  proto: RouteProto,
  path: string,
  vhostRetryPolicy: RetryPolicy | undefined,
  state: ParseState,
): Route | undefined {
  const { errors } = state;
  if (proto.match === undefined) {
    errors.add(`${path}.match`, "field not present");
    return undefined;
  }
  const match = parseRouteMatch(proto.match, `${path}.match`, errors);
  if (match === undefined) return undefined;
  let action: RouteAction | undefined;
  if (proto.action.case === "route") {
    action = parseRouteAction(proto.action.value, `${path}.route`, vhostRetryPolicy, state);
    if (action === undefined) return undefined;
  } else if (proto.action.case === "nonForwardingAction") {
    action = NON_FORWARDING;
  } else {
    action = UNSUPPORTED;
  }
  const typedPerFilterConfig = parseFilterOverrides(
    proto.typedPerFilterConfig,
    `${path}.typed_per_filter_config`,
    errors,
  );
  return Object.freeze({ name: proto.name, match, action, typedPerFilterConfig });
}

function parseClusterSpecifierPlugins(
  plugins: readonly ClusterSpecifierPluginProto[],
  path: string,
  errors: ValidationErrors,
): Map<string, TypedConfig | null> {
  const table = new Map<string, TypedConfig | null>();
  for (let i = 0; i < plugins.length; i++) {
    const plugin = plugins[i]!;
    const extensionPath = fieldPath(path, `cluster_specifier_plugins[${i}].extension`);
    if (plugin.extension === undefined) {
      errors.add(extensionPath, "field not present");
      continue;
    }
    const name = plugin.extension.name;
    if (table.has(name)) {
      errors.add(`${extensionPath}.name`, `duplicate name "${name}"`);
    } else {
      // Stands in until the config is known, so routes naming a broken plugin are not reported again.
      table.set(name, OPTIONAL_UNSUPPORTED);
    }
    const extension = extractExtension(plugin.extension.typedConfig, `${extensionPath}.typed_config`, errors);
    if (extension === undefined) continue;
    if (!SUPPORTED_CLUSTER_SPECIFIER_PLUGINS.has(extension.type)) {
      if (!plugin.isOptional) errors.add(extension.path, "unsupported ClusterSpecifierPlugin type");
      continue;
    }
    table.set(name, toTypedConfig(extension));
  }
  return table;
}

/**
 * Validates a RouteConfiguration with gRPC's rules (A28, A31, A39, A42, A44, RLS plugins). `path` prefixes every
 * reported field (empty for an RDS resource; the `route_config` field for an inline one).
 */
export function parseRouteConfigurationBody(
  proto: RouteConfigurationView,
  path: string,
  context: DecodeContext,
  errors: ValidationErrors,
): RouteConfigurationBody {
  const state: ParseState = {
    context,
    errors,
    plugins: parseClusterSpecifierPlugins(proto.clusterSpecifierPlugins, path, errors),
    pluginsUsed: new Set(),
  };
  const virtualHosts: VirtualHost[] = [];
  for (let i = 0; i < proto.virtualHosts.length; i++) {
    const vhost = proto.virtualHosts[i]!;
    const vhostPath = fieldPath(path, `virtual_hosts[${i}]`);
    for (let j = 0; j < vhost.domains.length; j++) {
      const domain = vhost.domains[j]!;
      if (!isValidDomainPattern(domain)) errors.add(`${vhostPath}.domains[${j}]`, `invalid domain pattern "${domain}"`);
    }
    if (vhost.domains.length === 0) errors.add(`${vhostPath}.domains`, "must be non-empty");
    const typedPerFilterConfig = parseFilterOverrides(
      vhost.typedPerFilterConfig,
      `${vhostPath}.typed_per_filter_config`,
      errors,
    );
    const retryPolicy =
      vhost.retryPolicy === undefined
        ? undefined
        : parseRetryPolicy(vhost.retryPolicy, `${vhostPath}.retry_policy`, errors);
    const routes: Route[] = [];
    for (let j = 0; j < vhost.routes.length; j++) {
      const route = parseRoute(vhost.routes[j]!, `${vhostPath}.routes[${j}]`, retryPolicy, state);
      if (route !== undefined) routes.push(route);
    }
    virtualHosts.push(
      Object.freeze({
        name: vhost.name,
        domains: Object.freeze([...vhost.domains]),
        routes: Object.freeze(routes),
        typedPerFilterConfig,
        ...(retryPolicy === undefined ? {} : { retryPolicy }),
      }),
    );
  }
  const clusterSpecifierPlugins: Record<string, TypedConfig> = {};
  for (const name of state.pluginsUsed) {
    const plugin = state.plugins.get(name);
    if (plugin) clusterSpecifierPlugins[name] = plugin;
  }
  return Object.freeze({
    virtualHosts: Object.freeze(virtualHosts),
    clusterSpecifierPlugins: Object.freeze(clusterSpecifierPlugins),
  });
}

const ROUTE_CONFIGURATION: ResourceMessage<RouteConfigurationView> = {
  typeUrl: "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
  label: "RouteConfiguration",
  reader: RouteConfigurationViewReader,
  nameOf: (view) => view.name,
};

/** RDS: `envoy.config.route.v3.RouteConfiguration`, validated as gRPC clients do. */
export const routeConfigurationResourceType: ResourceType<RouteConfigurationUpdate> = Object.freeze({
  typeUrl: ROUTE_CONFIGURATION.typeUrl,
  typeName: "RouteConfigurationResource",
  allResourcesRequiredInSotW: false,
  decode(resource: Any, context: DecodeContext): DecodeResult<RouteConfigurationUpdate> {
    return decodeResource(resource, ROUTE_CONFIGURATION, (view, errors) => ({
      name: view.name,
      ...parseRouteConfigurationBody(view, "", context, errors),
    }));
  },
});
