// The LB policy registry (A52): policies by gRPC name and by the xDS message type of their `TypedExtensionConfig`.
// xds-client turns a Cluster's `load_balancing_policy` (or legacy `lb_policy`) into gRPC's `loadBalancingConfig`
// JSON (`[{ "round_robin": {} }]`); the registry turns that into a policy instance.
import type { LbPolicyFactory, LbPolicyRegistry } from "./lb-policy.js";

export type { LbPolicyRegistry };

/** A `loadBalancingConfig` that cannot be used. The cluster (or child) goes to TRANSIENT_FAILURE with it. */
export class LbConfigError extends Error {
  override readonly name = "LbConfigError";
}

/** A registry holding `factories`; a later factory with the same name or type replaces the earlier one. */
export function createLbPolicyRegistry(factories: Iterable<LbPolicyFactory>): LbPolicyRegistry {
  const byName = new Map<string, LbPolicyFactory>();
  const byType = new Map<string, LbPolicyFactory>();
  for (const factory of factories) {
    byName.set(factory.name, factory);
    for (const type of factory.typeNames) byType.set(type, factory);
  }
  const all = Object.freeze([...byName.values()]);
  const registry: LbPolicyRegistry = {
    get: (name) => byName.get(name),
    getByTypeName: (typeName) => byType.get(typeName),
    list: () => all,
    select(configs) {
      for (const entry of configs) {
        if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
          throw new LbConfigError("a loadBalancingConfig entry must be an object");
        }
        const keys = Object.keys(entry);
        if (keys.length !== 1) {
          throw new LbConfigError(`a loadBalancingConfig entry must have exactly one key, not ${keys.length}`);
        }
        const name = keys[0] as string;
        const factory = byName.get(name);
        if (factory === undefined) continue;
        try {
          return { factory, config: factory.parseConfig((entry as Record<string, unknown>)[name]) };
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          throw new LbConfigError(`invalid ${name} config: ${reason}`);
        }
      }
      const names = configs.map((entry) => Object.keys(entry as object)[0] ?? "?").join(", ");
      throw new LbConfigError(`no supported LB policy in [${names}]`);
    },
    create(configs, helper) {
      const { factory, config } = registry.select(configs);
      return { policy: factory.create(helper), config };
    },
  };
  return registry;
}
