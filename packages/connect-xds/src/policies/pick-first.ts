// pick_first (A62): the endpoints' addresses in order (shuffled first when `shuffleAddressList`), tried one at a time
// until one connects; then only that one is used and the others are closed. When it disconnects the policy goes IDLE
// and reconnects on the next pick. After every address failed it reports TRANSIENT_FAILURE and stays there (sticky)
// while it keeps retrying each address as its backoff ends, until one is READY.
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type CompletePick,
  type ConnectivityState,
  failingPicker,
  idlePicker,
  type LbEndpoint,
  type LbHelper,
  type LbPolicy,
  type LbPolicyFactory,
  type LbPolicyUpdate,
  queuePicker,
  type Subchannel,
} from "../lb-policy.js";
import { objectConfig } from "./child-helper.js";

export interface PickFirstConfig {
  readonly shuffleAddressList: boolean;
}

interface Attempt {
  readonly subchannel: Subchannel;
  unwatch: () => void;
}

class PickFirst implements LbPolicy<PickFirstConfig> {
  private attempts: Attempt[] = [];
  /** Index of the address being tried in the current pass. */
  private index = 0;
  private selected: Attempt | undefined;
  /** Every address failed since the last READY (sticky TRANSIENT_FAILURE). */
  private failed = false;
  /** The selected connection was lost and no pick has asked for a new one yet. */
  private idle = false;
  private closed = false;
  private note: string | undefined;
  /** The addresses of the last update, in order, each with its endpoint. */
  private pairs: [string, LbEndpoint][] = [];

  constructor(private readonly helper: LbHelper) {}

  update({ config, endpoints, resolutionNote }: LbPolicyUpdate<PickFirstConfig>): void {
    this.note = resolutionNote;
    let ordered: readonly LbEndpoint[] = endpoints;
    if (config.shuffleAddressList) {
      const copy = [...endpoints];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = Math.floor(this.helper.random() * (i + 1));
        [copy[i], copy[j]] = [copy[j]!, copy[i]!];
      }
      ordered = copy;
    }
    const pairs: [string, LbEndpoint][] = [];
    const seen = new Set<string>();
    for (const endpoint of ordered) {
      for (const address of endpoint.addresses) {
        if (seen.has(address)) continue;
        seen.add(address);
        pairs.push([address, endpoint]);
      }
    }
    // A62: a selected address still in the list stays selected.
    if (this.selected !== undefined && seen.has(this.selected.subchannel.address)) {
      const keep = this.selected;
      for (const attempt of this.attempts) if (attempt !== keep) this.drop(attempt);
      this.attempts = [keep];
      return;
    }
    this.pairs = pairs;
    this.connectAll();
  }

  /** Subchannels for every address of the last update (existing ones kept), then a pass from the first. */
  private connectAll(): void {
    const old = new Map(this.attempts.map((attempt) => [attempt.subchannel.address, attempt]));
    this.attempts = this.pairs.map(([address, endpoint]) => {
      const existing = old.get(address);
      if (existing !== undefined) {
        old.delete(address);
        return existing;
      }
      const attempt: Attempt = { subchannel: this.helper.createSubchannel(address, endpoint), unwatch: () => {} };
      attempt.unwatch = attempt.subchannel.watch((state) => this.onStateChange(attempt, state));
      return attempt;
    });
    for (const attempt of old.values()) this.drop(attempt);
    this.selected = undefined;
    this.idle = false;
    if (this.attempts.length === 0) {
      const why = `no addresses${this.note === undefined ? "" : ` (${this.note})`}`;
      this.helper.updateState("TRANSIENT_FAILURE", failingPicker(new ConnectError(why, Code.Unavailable)));
      return;
    }
    this.startPass();
  }

  private startPass(): void {
    this.index = 0;
    if (!this.failed) this.helper.updateState("CONNECTING", queuePicker);
    this.tryCurrent();
  }

  /** Connects the address at `index`, or selects it if it is already READY (a shared connection). */
  private tryCurrent(): void {
    const attempt = this.attempts[this.index];
    if (attempt === undefined) return;
    const state = attempt.subchannel.state;
    if (state === "READY") this.select(attempt);
    else if (state === "IDLE") attempt.subchannel.requestConnection();
    else if (state === "TRANSIENT_FAILURE") this.advance();
  }

  private advance(): void {
    this.index++;
    if (this.index < this.attempts.length) {
      this.tryCurrent();
      return;
    }
    // Every address failed in this pass: sticky TRANSIENT_FAILURE; each retries when its backoff ends.
    this.failed = true;
    const error = this.attempts[this.attempts.length - 1]?.subchannel.lastError;
    const why = `failed to connect to all ${this.attempts.length} addresses; last error: ${error?.message ?? "unknown"}`;
    this.helper.updateState("TRANSIENT_FAILURE", failingPicker(new ConnectError(why, Code.Unavailable)));
    for (const attempt of this.attempts)
      if (attempt.subchannel.state === "IDLE") attempt.subchannel.requestConnection();
  }

  private select(attempt: Attempt): void {
    this.selected = attempt;
    this.failed = false;
    for (const other of this.attempts) if (other !== attempt) this.drop(other);
    this.attempts = [attempt];
    const pick: CompletePick = Object.freeze({ type: "complete", subchannel: attempt.subchannel });
    this.helper.updateState("READY", { pick: () => pick });
  }

  private onStateChange(attempt: Attempt, state: ConnectivityState): void {
    if (this.closed || !this.attempts.includes(attempt)) return;
    if (this.selected === attempt) {
      if (state !== "READY") {
        // A62: the connection was lost; go IDLE and reconnect when a call needs it.
        this.selected = undefined;
        this.idle = true;
        this.helper.updateState(
          "IDLE",
          idlePicker(() => this.exitIdle()),
        );
      }
      return;
    }
    if (state === "READY") {
      this.select(attempt);
    } else if (this.failed) {
      if (state === "IDLE") attempt.subchannel.requestConnection();
    } else if (state === "TRANSIENT_FAILURE" && this.attempts[this.index] === attempt) {
      this.advance();
    }
  }

  exitIdle(): void {
    if (this.closed || !this.idle) return;
    this.connectAll();
  }

  private drop(attempt: Attempt): void {
    attempt.unwatch();
    attempt.subchannel.close();
  }

  close(): void {
    this.closed = true;
    for (const attempt of this.attempts) this.drop(attempt);
    this.attempts = [];
    this.selected = undefined;
  }
}

export const pickFirstPolicy: LbPolicyFactory<PickFirstConfig> = {
  name: "pick_first",
  typeNames: ["envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst"],
  parseConfig(json) {
    const config = objectConfig(json, "pick_first config");
    const shuffle = config.shuffleAddressList ?? false;
    if (typeof shuffle !== "boolean") throw new Error("shuffleAddressList must be a boolean");
    return { shuffleAddressList: shuffle };
  },
  create: (helper) => new PickFirst(helper),
};
