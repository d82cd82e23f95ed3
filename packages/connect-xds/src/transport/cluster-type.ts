// The CDS resource type a transport watches with, given its LB policy registry (A52).
import { type ClusterUpdate, createClusterResourceType, type ResourceType } from "@xdskit/xds-client";
import type { LbPolicyRegistry } from "../balancer/lb-registry.js";

/** The `load_balancing_policy` types xds-client converts itself; any other type a registry has is a custom policy. */
const CONVERTED_TYPES = new Set([
  "envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin",
  "envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash",
  "envoy.extensions.load_balancing_policies.wrr_locality.v3.WrrLocality",
  "envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst",
  "envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest",
  "envoy.extensions.load_balancing_policies.client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin",
]);

/**
 * The CDS type the transport watches with: the built-in one, or one that accepts the registry's custom policies
 * (TypedStruct in `load_balancing_policy`, A52). A client decodes a type URL with the first type registered for it.
 */
export function clusterTypeFor(registry: LbPolicyRegistry): ResourceType<ClusterUpdate> | undefined {
  const custom = registry
    .list()
    .flatMap((factory) => factory.typeNames)
    .filter((type) => !CONVERTED_TYPES.has(type));
  return custom.length === 0 ? undefined : createClusterResourceType({ customLbPolicies: custom });
}
