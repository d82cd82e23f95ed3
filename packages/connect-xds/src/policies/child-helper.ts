// Helpers parents give their children: the parent's own helper with `updateState` redirected to the parent.
import type { ConnectivityState, LbHelper, Picker } from "../balancer/lb-policy.js";

export function childHelper(
  parent: LbHelper,
  updateState: (state: ConnectivityState, picker: Picker) => void,
): LbHelper {
  return {
    createSubchannel: (address, endpoint) => parent.createSubchannel(address, endpoint),
    createEndpointSubchannel: (endpoint) => parent.createEndpointSubchannel(endpoint),
    requestReresolution: () => parent.requestReresolution(),
    updateState,
    registry: parent.registry,
    logger: parent.logger,
    clock: parent.clock,
    random: parent.random,
    randomInt: parent.randomInt,
    target: parent.target,
    metrics: parent.metrics,
  };
}

/** `value` as a plain object, or throws naming `what`. */
export function objectConfig(value: unknown, what: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw new Error(`${what} must be an object`);
  return value as Record<string, unknown>;
}

/** A `loadBalancingConfig` list field, or throws naming it. */
export function policyList(value: unknown, what: string): readonly unknown[] {
  if (!Array.isArray(value) || value.length === 0) throw new Error(`${what} must be a non-empty list`);
  return value;
}
