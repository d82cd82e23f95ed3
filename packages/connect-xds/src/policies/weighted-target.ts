// weighted_target (A28): one child per target, calls split among the READY children by weight (a uniform draw
// over cumulative weights, as gRPC's random WRR). Aggregate state: READY if any child is, else CONNECTING if any is,
// else IDLE if any is, else TRANSIENT_FAILURE. Endpoints reach a child by the first element of their path.
import {
  type ConnectivityState,
  type LbHelper,
  type LbPolicy,
  type LbPolicyFactory,
  type LbPolicyUpdate,
  type Picker,
  type PickInfo,
  type PickResult,
  queuePicker,
  stripPath,
} from "../balancer/lb-policy.js";
import { childHelper, objectConfig, policyList } from "./child-helper.js";

export interface WeightedTargetConfig {
  readonly targets: ReadonlyMap<string, { readonly weight: number; readonly childPolicy: readonly unknown[] }>;
}

interface Child {
  readonly name: string;
  policy: LbPolicy;
  /** The child's policy config list, to tell whether an update changes its policy type. */
  policyName: string;
  weight: number;
  state: ConnectivityState;
  picker: Picker;
}

/** Picks among pickers by weight; allocation-free. */
export class WeightedPicker implements Picker {
  private readonly cumulative: Float64Array;
  private readonly total: number;
  constructor(
    private readonly pickers: readonly Picker[],
    weights: readonly number[],
    private readonly randomInt: (bound: number) => number,
  ) {
    this.cumulative = new Float64Array(weights.length);
    let total = 0;
    for (let i = 0; i < weights.length; i++) {
      total += weights[i]!;
      this.cumulative[i] = total;
    }
    this.total = total;
  }
  pick(info: PickInfo): PickResult {
    const draw = this.randomInt(this.total);
    const cumulative = this.cumulative;
    // Binary search for the first cumulative weight above the draw.
    let low = 0;
    let high = cumulative.length - 1;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (cumulative[mid]! > draw) high = mid;
      else low = mid + 1;
    }
    return this.pickers[low]!.pick(info);
  }
}

class WeightedTarget implements LbPolicy<WeightedTargetConfig> {
  private children = new Map<string, Child>();
  private updating = false;
  private closed = false;

  constructor(private readonly helper: LbHelper) {}

  update({ config, endpoints, resolutionNote }: LbPolicyUpdate<WeightedTargetConfig>): void {
    const byChild = stripPath(endpoints);
    this.updating = true;
    try {
      for (const [name, target] of config.targets) {
        const { factory, config: childConfig } = this.helper.registry.select(target.childPolicy);
        let child = this.children.get(name);
        if (child !== undefined && child.policyName !== factory.name) {
          child.policy.close();
          child = undefined;
        }
        if (child === undefined) {
          const created: Child = {
            name,
            policy: undefined as unknown as LbPolicy,
            policyName: factory.name,
            weight: target.weight,
            state: "CONNECTING",
            picker: queuePicker,
          };
          created.policy = factory.create(
            childHelper(this.helper, (state, picker) => {
              if (this.closed || this.children.get(name) !== created) return;
              created.state = state;
              created.picker = picker;
              if (!this.updating) this.publish();
            }),
          );
          this.children.set(name, created);
          child = created;
        }
        child.weight = target.weight;
        child.policy.update({
          config: childConfig,
          endpoints: byChild.get(name) ?? [],
          ...(resolutionNote === undefined ? {} : { resolutionNote }),
        });
      }
      for (const [name, child] of this.children) {
        if (!config.targets.has(name)) {
          child.policy.close();
          this.children.delete(name);
        }
      }
    } finally {
      this.updating = false;
    }
    this.publish();
  }

  private publish(): void {
    const ready: Child[] = [];
    let connecting = false;
    const idle: Child[] = [];
    for (const child of this.children.values()) {
      if (child.state === "READY") ready.push(child);
      else if (child.state === "CONNECTING") connecting = true;
      else if (child.state === "IDLE") idle.push(child);
    }
    const randomInt = this.helper.randomInt;
    const weighted = (children: Child[]) =>
      children.length === 1
        ? children[0]!.picker
        : new WeightedPicker(
            children.map((child) => child.picker),
            children.map((child) => child.weight),
            randomInt,
          );
    if (ready.length > 0) this.helper.updateState("READY", weighted(ready));
    else if (connecting) this.helper.updateState("CONNECTING", queuePicker);
    else if (idle.length > 0) this.helper.updateState("IDLE", weighted(idle));
    else if (this.children.size > 0)
      this.helper.updateState("TRANSIENT_FAILURE", weighted([...this.children.values()]));
    else this.helper.updateState("TRANSIENT_FAILURE", queuePicker);
  }

  exitIdle(): void {
    for (const child of this.children.values()) if (child.state === "IDLE") child.policy.exitIdle();
  }

  close(): void {
    this.closed = true;
    for (const child of this.children.values()) child.policy.close();
    this.children.clear();
  }
}

export const weightedTargetPolicy: LbPolicyFactory<WeightedTargetConfig> = {
  name: "weighted_target_experimental",
  typeNames: [],
  parseConfig(json) {
    const targets = objectConfig(objectConfig(json, "weighted_target config").targets, "targets");
    const parsed = new Map<string, { weight: number; childPolicy: readonly unknown[] }>();
    for (const [name, value] of Object.entries(targets)) {
      const target = objectConfig(value, `targets[${name}]`);
      const weight = target.weight;
      if (typeof weight !== "number" || !Number.isInteger(weight) || weight < 1) {
        throw new Error(`targets[${name}].weight must be a positive integer`);
      }
      parsed.set(name, { weight, childPolicy: policyList(target.childPolicy, `targets[${name}].childPolicy`) });
    }
    return { targets: parsed };
  },
  create: (helper) => new WeightedTarget(helper),
};
