// priority (A27 as grpc-go and C-core run it): children in priority order, started lazily. The policy uses the
// first child that is READY or IDLE, or CONNECTING within its failover timer (10 s from its start, or from leaving
// READY/IDLE, unless it reported TRANSIENT_FAILURE since); a child in TRANSIENT_FAILURE or past its timer lets
// the next one start. Lower children are deactivated once a higher one is chosen again and closed after 15 minutes
// unless chosen meanwhile. When none qualifies, the lowest child's state and picker are used.
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type ConnectivityState,
  failingPicker,
  type LbEndpoint,
  type LbHelper,
  type LbPolicy,
  type LbPolicyFactory,
  type LbPolicyUpdate,
  type Picker,
  queuePicker,
  stripPath,
} from "../balancer/lb-policy.js";
import { childHelper, objectConfig, policyList } from "./child-helper.js";

export const PRIORITY_FAILOVER_TIMEOUT_MS = 10_000;
export const CHILD_RETENTION_MS = 15 * 60_000;

export interface PriorityConfig {
  /** Child names, highest priority first. */
  readonly priorities: readonly string[];
  readonly children: ReadonlyMap<string, { readonly config: readonly unknown[] }>;
}

interface Child {
  readonly name: string;
  policy: LbPolicy | undefined;
  policyName: string;
  config: unknown;
  endpoints: readonly LbEndpoint[];
  state: ConnectivityState;
  picker: Picker;
  reportedFailure: boolean;
  failoverTimer: unknown;
  retentionTimer: unknown;
}

class Priority implements LbPolicy<PriorityConfig> {
  private children = new Map<string, Child>();
  private priorities: readonly string[] = [];
  private inUse: string | undefined;
  private note: string | undefined;
  private updating = false;
  private closed = false;

  constructor(private readonly helper: LbHelper) {}

  update({ config, endpoints, resolutionNote }: LbPolicyUpdate<PriorityConfig>): void {
    this.note = resolutionNote;
    const byChild = stripPath(endpoints);
    this.updating = true;
    try {
      for (const [name, child] of this.children) {
        if (!config.children.has(name)) this.remove(child);
      }
      for (const name of config.priorities) {
        const childConfig = config.children.get(name);
        if (childConfig === undefined) throw new Error(`priority ${name} has no child config`);
        const { factory, config: parsed } = this.helper.registry.select(childConfig.config);
        let child = this.children.get(name);
        if (child === undefined) {
          child = {
            name,
            policy: undefined,
            policyName: factory.name,
            config: parsed,
            endpoints: [],
            state: "CONNECTING",
            picker: queuePicker,
            reportedFailure: false,
            failoverTimer: undefined,
            retentionTimer: undefined,
          };
          this.children.set(name, child);
        }
        const changedType = child.policyName !== factory.name;
        child.policyName = factory.name;
        child.config = parsed;
        child.endpoints = byChild.get(name) ?? [];
        if (child.policy !== undefined && changedType) {
          child.policy.close();
          child.policy = undefined;
          this.stopFailoverTimer(child);
          this.start(child);
        } else if (child.policy !== undefined) {
          this.sendUpdate(child);
        }
      }
      this.priorities = config.priorities;
    } finally {
      this.updating = false;
    }
    this.sync();
  }

  private sendUpdate(child: Child): void {
    const note = this.note;
    child.policy?.update({
      config: child.config,
      endpoints: child.endpoints,
      ...(note === undefined ? {} : { resolutionNote: note }),
    });
  }

  private start(child: Child): void {
    const factory = this.helper.registry.get(child.policyName);
    if (factory === undefined) throw new Error(`LB policy ${child.policyName} is not registered`);
    child.state = "CONNECTING";
    child.picker = queuePicker;
    child.reportedFailure = false;
    child.policy = factory.create(childHelper(this.helper, (state, picker) => this.onChildState(child, state, picker)));
    this.startFailoverTimer(child);
    this.sendUpdate(child);
  }

  private startFailoverTimer(child: Child): void {
    if (child.failoverTimer !== undefined) return;
    child.failoverTimer = this.helper.clock.setTimeout(() => {
      child.failoverTimer = undefined;
      this.sync();
    }, PRIORITY_FAILOVER_TIMEOUT_MS);
  }

  private stopFailoverTimer(child: Child): void {
    if (child.failoverTimer === undefined) return;
    this.helper.clock.clearTimeout(child.failoverTimer);
    child.failoverTimer = undefined;
  }

  private onChildState(child: Child, state: ConnectivityState, picker: Picker): void {
    if (this.closed || this.children.get(child.name) !== child || child.policy === undefined) return;
    const previous = child.state;
    child.state = state;
    child.picker = picker;
    if (state === "READY" || state === "IDLE") {
      child.reportedFailure = false;
      this.stopFailoverTimer(child);
    } else if (state === "TRANSIENT_FAILURE") {
      child.reportedFailure = true;
      this.stopFailoverTimer(child);
    } else if (!child.reportedFailure && previous !== "CONNECTING") {
      this.startFailoverTimer(child);
    }
    if (!this.updating) this.sync(child.name);
  }

  /** Chooses the child in use and publishes its picker. */
  private sync(updated?: string): void {
    if (this.closed) return;
    if (this.priorities.length === 0) {
      const why = `no priorities${this.note === undefined ? "" : ` (${this.note})`}`;
      this.helper.updateState("TRANSIENT_FAILURE", failingPicker(new ConnectError(why, Code.Unavailable)));
      return;
    }
    for (;;) {
      const chosen = this.choose();
      if (chosen.policy === undefined) {
        // Started with publishing held: the next round reads the state it reported while starting.
        this.updating = true;
        try {
          this.start(chosen);
        } finally {
          this.updating = false;
        }
        updated = undefined;
        continue;
      }
      const index = this.priorities.indexOf(chosen.name);
      for (let q = index + 1; q < this.priorities.length; q++) this.deactivate(this.children.get(this.priorities[q]!)!);
      if (chosen.retentionTimer !== undefined) {
        this.helper.clock.clearTimeout(chosen.retentionTimer);
        chosen.retentionTimer = undefined;
      }
      if (this.inUse !== chosen.name || updated === undefined || updated === chosen.name) {
        this.inUse = chosen.name;
        this.helper.updateState(chosen.state, chosen.picker);
      }
      return;
    }
  }

  /** The first child not started, READY, IDLE or CONNECTING within its timer; else the lowest. */
  private choose(): Child {
    const last = this.priorities.length - 1;
    for (let p = 0; p < last; p++) {
      const child = this.children.get(this.priorities[p]!)!;
      if (
        child.policy === undefined ||
        child.state === "READY" ||
        child.state === "IDLE" ||
        (child.state === "CONNECTING" && child.failoverTimer !== undefined)
      ) {
        return child;
      }
    }
    return this.children.get(this.priorities[last]!)!;
  }

  private deactivate(child: Child): void {
    if (child.policy === undefined || child.retentionTimer !== undefined) return;
    this.stopFailoverTimer(child);
    child.retentionTimer = this.helper.clock.setTimeout(() => {
      child.retentionTimer = undefined;
      child.policy?.close();
      child.policy = undefined;
      child.state = "CONNECTING";
      child.picker = queuePicker;
    }, CHILD_RETENTION_MS);
  }

  private remove(child: Child): void {
    this.stopFailoverTimer(child);
    if (child.retentionTimer !== undefined) this.helper.clock.clearTimeout(child.retentionTimer);
    child.policy?.close();
    this.children.delete(child.name);
  }

  exitIdle(): void {
    const child = this.inUse === undefined ? undefined : this.children.get(this.inUse);
    child?.policy?.exitIdle();
  }

  close(): void {
    this.closed = true;
    for (const child of this.children.values()) this.remove(child);
  }
}

export const priorityPolicy: LbPolicyFactory<PriorityConfig> = {
  name: "priority_experimental",
  typeNames: [],
  parseConfig(json) {
    const config = objectConfig(json, "priority config");
    const priorities = config.priorities;
    if (!Array.isArray(priorities) || priorities.some((name) => typeof name !== "string")) {
      throw new Error("priorities must be a list of names");
    }
    const childrenJson = objectConfig(config.children, "children");
    const children = new Map<string, { config: readonly unknown[] }>();
    for (const [name, value] of Object.entries(childrenJson)) {
      children.set(name, {
        config: policyList(objectConfig(value, `children[${name}]`).config, `children[${name}].config`),
      });
    }
    for (const name of priorities as string[]) {
      if (!children.has(name)) throw new Error(`priority ${name} has no child config`);
    }
    return { priorities: priorities as string[], children };
  },
  create: (helper) => new Priority(helper),
};
