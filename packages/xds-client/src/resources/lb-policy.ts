import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import {
  Cluster_LbPolicy,
  Cluster_RingHashLbConfig_HashFunction,
} from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { RingHash_HashFunction } from "@xdskit/protos/envoy/extensions/load_balancing_policies/ring_hash/v3/ring_hash_pb";
import type { ClusterView, LoadBalancingPolicyView } from "../gen/envoy/config/cluster/v3/cluster_view.js";
import { ClientSideWeightedRoundRobinViewReader } from "../gen/envoy/extensions/load_balancing_policies/client_side_weighted_round_robin/v3/client_side_weighted_round_robin_view.js";
import { LeastRequestViewReader } from "../gen/envoy/extensions/load_balancing_policies/least_request/v3/least_request_view.js";
import { PickFirstViewReader } from "../gen/envoy/extensions/load_balancing_policies/pick_first/v3/pick_first_view.js";
import { RingHashViewReader } from "../gen/envoy/extensions/load_balancing_policies/ring_hash/v3/ring_hash_view.js";
import { WrrLocalityViewReader } from "../gen/envoy/extensions/load_balancing_policies/wrr_locality/v3/wrr_locality_view.js";
import { durationMsToJson, parseDurationMs } from "./duration.js";
import { decodeExtension, extractExtension, type XdsExtension } from "./extension.js";
import { deepFreezeJson, type ValidationErrors } from "./validation.js";

/**
 * One LB policy in gRPC's service-config JSON form: an object with a single key, the policy name
 * (`{ "ring_hash_experimental": { "minRingSize": 1024, "maxRingSize": 8388608 } }`). A Cluster's `lbPolicy` is a
 * list of them, as gRPC's `loadBalancingConfig` (A52).
 */
export type LbPolicyConfig = Readonly<JsonObject>;

const MAX_RING_SIZE = 8388608;
/** The `lb_policy: ROUND_ROBIN` conversion, shared by every Cluster using it. */
const ROUND_ROBIN_IN_WRR_LOCALITY = deepFreezeJson([
  { xds_wrr_locality_experimental: { childPolicy: [{ round_robin: {} }] } },
]) as readonly LbPolicyConfig[];
const MAX_RECURSION_DEPTH = 16;

const TYPES = {
  roundRobin: "envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin",
  ringHash: "envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash",
  wrrLocality: "envoy.extensions.load_balancing_policies.wrr_locality.v3.WrrLocality",
  pickFirst: "envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst",
  leastRequest: "envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest",
  weightedRoundRobin:
    "envoy.extensions.load_balancing_policies.client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin",
} as const;

interface Converter {
  readonly customPolicies: ReadonlySet<string>;
  readonly errors: ValidationErrors;
}

function ringSize(value: bigint | undefined, fallback: number, path: string, errors: ValidationErrors): number {
  if (value === undefined) return fallback;
  if (value === 0n || value > BigInt(MAX_RING_SIZE)) errors.add(path, "value must be in the range [1, 8388608]");
  return Number(value);
}

function convertRingHash(extension: XdsExtension, errors: ValidationErrors): JsonObject | undefined {
  const config = decodeExtension(extension, RingHashViewReader);
  if (config === undefined) {
    errors.add(extension.path, "can't decode RingHash LB policy config");
    return undefined;
  }
  if (
    config.hashFunction !== RingHash_HashFunction.XX_HASH &&
    config.hashFunction !== RingHash_HashFunction.DEFAULT_HASH
  ) {
    errors.add(`${extension.path}.hash_function`, "unsupported value (must be XX_HASH)");
  }
  const maxRingSize = ringSize(config.maximumRingSize, MAX_RING_SIZE, `${extension.path}.maximum_ring_size`, errors);
  const minPath = `${extension.path}.minimum_ring_size`;
  const minRingSize = ringSize(config.minimumRingSize, 1024, minPath, errors);
  if (config.minimumRingSize !== undefined && minRingSize > maxRingSize) {
    errors.add(minPath, "cannot be greater than maximum_ring_size");
  }
  return { ring_hash_experimental: { minRingSize, maxRingSize } };
}

function convertWeightedRoundRobin(extension: XdsExtension, errors: ValidationErrors): JsonObject | undefined {
  const config = decodeExtension(extension, ClientSideWeightedRoundRobinViewReader);
  if (config === undefined) {
    errors.add(extension.path, "can't decode ClientSideWeightedRoundRobin LB policy config");
    return undefined;
  }
  const json: JsonObject = {};
  if (config.enableOobLoadReport === true) json.enableOobLoadReport = true;
  const durations = [
    ["oobReportingPeriod", "oob_reporting_period", config.oobReportingPeriod],
    ["blackoutPeriod", "blackout_period", config.blackoutPeriod],
    ["weightUpdatePeriod", "weight_update_period", config.weightUpdatePeriod],
    ["weightExpirationPeriod", "weight_expiration_period", config.weightExpirationPeriod],
  ] as const;
  for (const [key, field, duration] of durations) {
    if (duration !== undefined) {
      json[key] = durationMsToJson(parseDurationMs(duration, `${extension.path}.${field}`, errors));
    }
  }
  if (config.errorUtilizationPenalty !== undefined) {
    if (config.errorUtilizationPenalty < 0) {
      errors.add(`${extension.path}.error_utilization_penalty`, "value must be non-negative");
    }
    json.errorUtilizationPenalty = config.errorUtilizationPenalty;
  }
  return { weighted_round_robin: json };
}

function convertLeastRequest(extension: XdsExtension, errors: ValidationErrors): JsonObject | undefined {
  const config = decodeExtension(extension, LeastRequestViewReader);
  if (config === undefined) {
    errors.add(extension.path, "can't decode LeastRequest LB policy config");
    return undefined;
  }
  const choiceCount = config.choiceCount ?? 2;
  if (choiceCount < 2) errors.add(`${extension.path}.choice_count`, "must be greater than or equal to 2");
  return { least_request_experimental: { choiceCount } };
}

function convertOne(
  converter: Converter,
  extension: XdsExtension,
  depth: number,
): JsonObject | undefined | "unsupported" {
  const { errors } = converter;
  if (extension.kind === "json") {
    // A TypedStruct names a custom policy; gRPC accepts it when its LB registry knows the name.
    if (!converter.customPolicies.has(extension.type)) return "unsupported";
    return { [extension.type]: extension.value };
  }
  switch (extension.type) {
    case TYPES.roundRobin:
      return { round_robin: {} };
    case TYPES.ringHash:
      return convertRingHash(extension, errors);
    case TYPES.weightedRoundRobin:
      return convertWeightedRoundRobin(extension, errors);
    case TYPES.leastRequest:
      return convertLeastRequest(extension, errors);
    case TYPES.pickFirst: {
      const config = decodeExtension(extension, PickFirstViewReader);
      if (config === undefined) {
        errors.add(extension.path, "can't decode PickFirst LB policy config");
        return undefined;
      }
      return { pick_first: { shuffleAddressList: config.shuffleAddressList } };
    }
    case TYPES.wrrLocality: {
      const config = decodeExtension(extension, WrrLocalityViewReader);
      if (config === undefined) {
        errors.add(extension.path, "can't decode WrrLocality LB policy config");
        return undefined;
      }
      const childPath = `${extension.path}.endpoint_picking_policy`;
      if (config.endpointPickingPolicy === undefined) {
        errors.add(childPath, "field not present");
        return undefined;
      }
      const child = convertPolicyList(converter, config.endpointPickingPolicy, childPath, depth + 1);
      return { xds_wrr_locality_experimental: { childPolicy: child as JsonValue[] } };
    }
    default:
      return "unsupported";
  }
}

/** A52: the first policy of the list this client supports, converted; reports when none is. */
function convertPolicyList(
  converter: Converter,
  policy: LoadBalancingPolicyView,
  path: string,
  depth: number,
): LbPolicyConfig[] {
  const { errors } = converter;
  if (depth >= MAX_RECURSION_DEPTH) {
    errors.add(path, `exceeded max recursion depth of ${MAX_RECURSION_DEPTH}`);
    return [];
  }
  const before = errors.count;
  for (let i = 0; i < policy.policies.length; i++) {
    const configPath = `${path}.policies[${i}].typed_extension_config`;
    const typedExtensionConfig = policy.policies[i]!.typedExtensionConfig;
    if (typedExtensionConfig === undefined) {
      errors.add(configPath, "field not present");
      return [];
    }
    const extension = extractExtension(typedExtensionConfig.typedConfig, `${configPath}.typed_config`, errors);
    if (extension === undefined) return [];
    const converted = convertOne(converter, extension, depth);
    if (converted === "unsupported") continue;
    return converted === undefined ? [] : [converted];
  }
  if (errors.count === before) errors.add(path, "no supported load balancing policy config found");
  return [];
}

/**
 * The Cluster's LB policy as gRPC's `loadBalancingConfig` list: from `load_balancing_policy` when set (A52), else
 * from the `lb_policy` enum (ROUND_ROBIN, RING_HASH with `ring_hash_lb_config`, LEAST_REQUEST with
 * `least_request_lb_config`).
 */
export function parseLbPolicy(
  cluster: ClusterView,
  customPolicies: ReadonlySet<string>,
  errors: ValidationErrors,
): readonly LbPolicyConfig[] {
  if (cluster.loadBalancingPolicy !== undefined) {
    const list = convertPolicyList({ customPolicies, errors }, cluster.loadBalancingPolicy, "load_balancing_policy", 0);
    return deepFreezeJson(list as JsonValue[]) as readonly LbPolicyConfig[];
  }
  let policy: JsonObject;
  switch (cluster.lbPolicy) {
    case Cluster_LbPolicy.ROUND_ROBIN:
      return ROUND_ROBIN_IN_WRR_LOCALITY;
    case Cluster_LbPolicy.RING_HASH: {
      let minRingSize = 1024;
      let maxRingSize = MAX_RING_SIZE;
      const config = cluster.lbConfig.case === "ringHashLbConfig" ? cluster.lbConfig.value : undefined;
      if (config !== undefined) {
        maxRingSize = ringSize(config.maximumRingSize, MAX_RING_SIZE, "ring_hash_lb_config.maximum_ring_size", errors);
        minRingSize = ringSize(config.minimumRingSize, 1024, "ring_hash_lb_config.minimum_ring_size", errors);
        if (config.minimumRingSize !== undefined && minRingSize > maxRingSize) {
          errors.add("ring_hash_lb_config.minimum_ring_size", "cannot be greater than maximum_ring_size");
        }
        if (config.hashFunction !== Cluster_RingHashLbConfig_HashFunction.XX_HASH) {
          errors.add("ring_hash_lb_config.hash_function", "invalid hash function");
        }
      }
      policy = { ring_hash_experimental: { minRingSize, maxRingSize } };
      break;
    }
    case Cluster_LbPolicy.LEAST_REQUEST: {
      const config = cluster.lbConfig.case === "leastRequestLbConfig" ? cluster.lbConfig.value : undefined;
      const choiceCount = config?.choiceCount ?? 2;
      if (choiceCount < 2) {
        errors.add("least_request_lb_config.choice_count", "must be greater than or equal to 2");
      }
      policy = { least_request_experimental: { choiceCount } };
      break;
    }
    default:
      errors.add("lb_policy", "LB policy is not supported");
      return deepFreezeJson([]) as readonly LbPolicyConfig[];
  }
  return deepFreezeJson([policy]) as readonly LbPolicyConfig[];
}
