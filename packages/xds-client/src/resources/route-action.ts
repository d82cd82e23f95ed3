// A route's action: its cluster (one, weighted, or a cluster specifier plugin), max stream duration, retry policy
// (A44), hash policies (A42) and URL rewrites, each checked as gRPC checks it.
import type {
  RetryPolicyView as RetryPolicyProto,
  RouteActionView as RouteActionProto,
} from "../gen/envoy/config/route/v3/route_components_view.js";
import { compileRegex, compileRewrite, RegexError } from "../shared/regex.js";
import type { DecodeContext } from "../wire/resource-type.js";
import { parseDurationMs } from "./duration.js";
import type { TypedConfig } from "./extension.js";
import { parseFilterOverrides } from "./filter-overrides.js";
import { regexProblem } from "./matchers.js";
import type {
  ForwardingFields,
  HashPolicy,
  RetryableCode,
  RetryPolicy,
  RouteAction,
  WeightedClusterEntry,
} from "./route-types.js";
import { EMPTY, fieldPath, keptList, UINT32_MAX, type ValidationErrors } from "./validation.js";

const RETRY_CODES: Readonly<Record<string, RetryableCode>> = {
  cancelled: "CANCELLED",
  "deadline-exceeded": "DEADLINE_EXCEEDED",
  internal: "INTERNAL",
  "resource-exhausted": "RESOURCE_EXHAUSTED",
  unavailable: "UNAVAILABLE",
};
/** Plugin table entry of an optional plugin this client does not support: routes using it are skipped. */
export const OPTIONAL_UNSUPPORTED = null;

export function parseRetryPolicy(proto: RetryPolicyProto, path: string, errors: ValidationErrors): RetryPolicy {
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
  return keptList(policies);
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

export interface ParseState {
  readonly context: DecodeContext;
  readonly errors: ValidationErrors;
  /** Plugin name → its config, or OPTIONAL_UNSUPPORTED. */
  readonly plugins: Map<string, TypedConfig | null>;
  readonly pluginsUsed: Set<string>;
}

/** Returns undefined when the route is to be ignored. */
export function parseRouteAction(
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
        weightedClusters: keptList(entries),
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
