// round_robin: one subchannel per endpoint (A61: all its addresses, see endpoint-subchannel.ts), every one kept connecting, picks rotating over the
// READY ones from a random start. An endpoint that failed stays TRANSIENT_FAILURE for the aggregate until it is READY
// again (gRPC's sticky TRANSIENT_FAILURE), so a flapping backend does not make the policy report CONNECTING.
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type CompletePick,
  type ConnectivityState,
  failingPicker,
  type LbHelper,
  type LbPolicy,
  type LbPolicyFactory,
  type LbPolicyUpdate,
  type Picker,
  queuePicker,
  type Subchannel,
} from "../balancer/lb-policy.js";

interface Entry {
  /** The endpoint's addresses in order: a change makes it a new endpoint (a new subchannel). */
  readonly addresses: string;
  readonly subchannel: Subchannel;
  readonly pick: CompletePick;
  /** The state the aggregate counts: the subchannel's, with TRANSIENT_FAILURE kept until READY. */
  state: ConnectivityState;
  unwatch: () => void;
}

class RoundRobinPicker implements Picker {
  private next: number;
  constructor(
    private readonly picks: readonly CompletePick[],
    start: number,
  ) {
    this.next = start;
  }
  pick(): CompletePick {
    const pick = this.picks[this.next]!;
    if (++this.next === this.picks.length) this.next = 0;
    return pick;
  }
}

class RoundRobin implements LbPolicy {
  private entries = new Map<string, Entry>();
  private note: string | undefined;
  private closed = false;

  constructor(private readonly helper: LbHelper) {}

  update({ endpoints, resolutionNote }: LbPolicyUpdate): void {
    this.note = resolutionNote;
    const next = new Map<string, Entry>();
    for (const endpoint of endpoints) {
      const address = endpoint.addresses[0];
      if (address === undefined || next.has(address)) continue;
      const addresses = endpoint.addresses.join(",");
      const existing = this.entries.get(address);
      if (existing !== undefined && existing.addresses === addresses) {
        next.set(address, existing);
        continue;
      }
      const subchannel = this.helper.createEndpointSubchannel(endpoint);
      const entry: Entry = {
        addresses,
        subchannel,
        pick: Object.freeze({ type: "complete", subchannel }),
        state: subchannel.state,
        unwatch: () => {},
      };
      entry.unwatch = subchannel.watch((state) => this.onStateChange(entry, state));
      next.set(address, entry);
    }
    // New subchannels first, then the old ones go: an address in both keeps its connection.
    for (const [address, entry] of this.entries) {
      if (next.get(address) !== entry) {
        entry.unwatch();
        entry.subchannel.close();
      }
    }
    this.entries = next;
    for (const entry of next.values()) if (entry.subchannel.state === "IDLE") entry.subchannel.requestConnection();
    this.publish();
  }

  private onStateChange(entry: Entry, state: ConnectivityState): void {
    if (this.closed || this.entries.get(entry.subchannel.address) !== entry) return;
    // A connection that failed or was lost may mean the addresses changed (a DNS cluster resolves again).
    if (state === "TRANSIENT_FAILURE" || (state === "IDLE" && entry.state === "READY"))
      this.helper.requestReresolution();
    if (state === "IDLE") entry.subchannel.requestConnection();
    if (entry.state === "TRANSIENT_FAILURE" && state !== "READY") return;
    entry.state = state;
    this.publish();
  }

  private publish(): void {
    const ready: CompletePick[] = [];
    let connecting = false;
    let lastError: Error | undefined;
    for (const entry of this.entries.values()) {
      if (entry.state === "READY") ready.push(entry.pick);
      else if (entry.state === "TRANSIENT_FAILURE") lastError = entry.subchannel.lastError ?? lastError;
      else connecting = true;
    }
    if (ready.length > 0) {
      this.helper.updateState("READY", new RoundRobinPicker(ready, Math.floor(this.helper.random() * ready.length)));
    } else if (connecting) {
      this.helper.updateState("CONNECTING", queuePicker);
    } else {
      const why =
        this.entries.size === 0
          ? `no endpoints${this.note === undefined ? "" : ` (${this.note})`}`
          : `no endpoint is reachable (${this.entries.size} tried; last error: ${lastError?.message ?? "unknown"})`;
      this.helper.updateState("TRANSIENT_FAILURE", failingPicker(new ConnectError(why, Code.Unavailable)));
    }
  }

  exitIdle(): void {
    for (const entry of this.entries.values())
      if (entry.subchannel.state === "IDLE") entry.subchannel.requestConnection();
  }

  close(): void {
    this.closed = true;
    for (const entry of this.entries.values()) {
      entry.unwatch();
      entry.subchannel.close();
    }
    this.entries.clear();
  }
}

export const roundRobinPolicy: LbPolicyFactory<Record<string, never>> = {
  name: "round_robin",
  typeNames: ["envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin"],
  parseConfig: () => ({}),
  create: (helper) => new RoundRobin(helper),
};
