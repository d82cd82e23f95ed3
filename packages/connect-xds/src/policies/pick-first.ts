// pick_first (A62, A61): the endpoints' addresses flattened in order (the endpoints shuffled first when
// `shuffleAddressList`), the two address families interleaved, then one Happy Eyeballs pass: each address is tried
// in turn, and the next one starts when the attempt fails or after the Connection Attempt Delay (250 ms) with the
// earlier attempts still running. The first connection READY is used and the others are closed. Once every address
// failed in the pass the policy reports TRANSIENT_FAILURE and stays there (sticky) while every address retries as its
// backoff ends, until one is READY. A lost connection makes the policy IDLE until a pick asks for a new one.
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
} from "../balancer/lb-policy.js";
import { objectConfig } from "./child-helper.js";

export interface PickFirstConfig {
  readonly shuffleAddressList: boolean;
}

/** RFC 8305's default Connection Attempt Delay (A61). */
export const CONNECTION_ATTEMPT_DELAY_MS = 250;

interface Attempt {
  readonly subchannel: Subchannel;
  unwatch: () => void;
}

/** `host:port` of an IPv6 address is written `[v6]:port`; anything else counts as IPv4 (A61 interleaving). */
const isIpv6 = (address: string) => address.startsWith("[");

/**
 * RFC 8305 section 4 as A61 applies it to the flattened list: addresses of the first address's family and of the
 * other family alternate, each family in its own order; what one family has left over comes last.
 */
export function interleaveFamilies(addresses: readonly string[]): string[] {
  const first = addresses[0];
  if (first === undefined) return [];
  const same: string[] = [];
  const other: string[] = [];
  for (const address of addresses) (isIpv6(address) === isIpv6(first) ? same : other).push(address);
  const out: string[] = [];
  for (let i = 0; i < Math.max(same.length, other.length); i++) {
    if (i < same.length) out.push(same[i]!);
    if (i < other.length) out.push(other[i]!);
  }
  return out;
}

type Mode = "pass" | "failed" | "selected" | "idle";

class PickFirst implements LbPolicy<PickFirstConfig> {
  private attempts: Attempt[] = [];
  private mode: Mode = "pass";
  /** The address last started in the current pass. */
  private index = 0;
  /** Attempts that failed at least once in the current pass. */
  private failedInPass = new Set<Attempt>();
  /** Failures seen in sticky TRANSIENT_FAILURE since re-resolution was last asked (A61). */
  private failures = 0;
  private timer: unknown;
  private selected: Attempt | undefined;
  /** TRANSIENT_FAILURE was reported and no address has been READY since (sticky, A62). */
  private failed = false;
  private closed = false;
  private note: string | undefined;
  /** The addresses of the last update, in the order they are tried, each with its endpoint. */
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
    const endpointOf = new Map<string, LbEndpoint>();
    for (const endpoint of ordered) {
      for (const address of endpoint.addresses) if (!endpointOf.has(address)) endpointOf.set(address, endpoint);
    }
    this.pairs = interleaveFamilies([...endpointOf.keys()]).map((address) => [address, endpointOf.get(address)!]);
    // A62: a selected address still in the list stays selected.
    const keep = this.selected;
    if (keep !== undefined && endpointOf.has(keep.subchannel.address)) {
      for (const attempt of this.attempts) if (attempt !== keep) this.drop(attempt);
      this.attempts = [keep];
      return;
    }
    this.connectAll();
  }

  /** Subchannels for every address of the last update (existing ones kept), then a new pass from the first. */
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
    if (this.attempts.length === 0) {
      this.stopTimer();
      const why = `no addresses${this.note === undefined ? "" : ` (${this.note})`}`;
      this.helper.updateState("TRANSIENT_FAILURE", failingPicker(new ConnectError(why, Code.Unavailable)));
      return;
    }
    this.startPass();
  }

  private startPass(): void {
    this.stopTimer();
    this.mode = "pass";
    this.index = 0;
    this.failedInPass.clear();
    if (!this.failed) this.helper.updateState("CONNECTING", queuePicker);
    this.tryCurrent();
  }

  /**
   * A61: starts the attempt at `index` (READY: selected; IDLE: connect; CONNECTING: counted as started; in
   * TRANSIENT_FAILURE it is backing off from a failure, which counts as this pass's attempt) and, unless it is the
   * last, arms the Connection Attempt Delay.
   */
  private tryCurrent(): void {
    const attempt = this.attempts[this.index];
    if (attempt === undefined) return;
    const state = attempt.subchannel.state;
    if (state === "READY") {
      this.select(attempt);
      return;
    }
    if (state === "TRANSIENT_FAILURE") {
      this.failedInPass.add(attempt);
      this.advance();
      return;
    }
    if (state === "IDLE") attempt.subchannel.requestConnection();
    if (this.mode !== "pass" || this.attempts[this.index] !== attempt) return;
    if (this.index < this.attempts.length - 1) {
      this.timer = this.helper.clock.setTimeout(() => {
        this.timer = undefined;
        if (!this.closed && this.mode === "pass") this.advance();
      }, CONNECTION_ATTEMPT_DELAY_MS);
    }
  }

  private advance(): void {
    this.stopTimer();
    if (this.index < this.attempts.length) this.index++;
    if (this.index < this.attempts.length) this.tryCurrent();
    else this.checkPassDone();
  }

  /** The pass ends once every address was started and every one failed at least once. */
  private checkPassDone(): void {
    if (this.mode !== "pass" || this.index < this.attempts.length) return;
    for (const attempt of this.attempts) if (!this.failedInPass.has(attempt)) return;
    this.mode = "failed";
    this.failed = true;
    this.failures = 0;
    this.publishFailure();
    this.helper.requestReresolution();
    for (const attempt of this.attempts)
      if (attempt.subchannel.state === "IDLE") attempt.subchannel.requestConnection();
  }

  private publishFailure(): void {
    let error: Error | undefined;
    for (const attempt of this.attempts) error = attempt.subchannel.lastError ?? error;
    const why = `failed to connect to all ${this.attempts.length} addresses; last error: ${error?.message ?? "unknown"}`;
    this.helper.updateState("TRANSIENT_FAILURE", failingPicker(new ConnectError(why, Code.Unavailable)));
  }

  private select(attempt: Attempt): void {
    this.stopTimer();
    this.selected = attempt;
    this.mode = "selected";
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
        // The connection was lost: IDLE until a call needs a new one (A62), and the resolver may know better now.
        this.selected = undefined;
        this.mode = "idle";
        this.helper.updateState(
          "IDLE",
          idlePicker(() => this.exitIdle()),
        );
        this.helper.requestReresolution();
      }
      return;
    }
    if (state === "READY") {
      this.select(attempt);
    } else if (this.mode === "failed") {
      if (state === "IDLE") attempt.subchannel.requestConnection();
      else if (state === "TRANSIENT_FAILURE") {
        this.publishFailure();
        if (++this.failures >= this.attempts.length) {
          this.failures = 0;
          this.helper.requestReresolution();
        }
      }
    } else if (this.mode === "pass" && state === "TRANSIENT_FAILURE") {
      this.failedInPass.add(attempt);
      if (this.attempts[this.index] === attempt) this.advance();
      else this.checkPassDone();
    }
  }

  exitIdle(): void {
    if (this.closed || this.mode !== "idle") return;
    this.connectAll();
  }

  private stopTimer(): void {
    if (this.timer === undefined) return;
    this.helper.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private drop(attempt: Attempt): void {
    attempt.unwatch();
    attempt.subchannel.close();
  }

  close(): void {
    this.closed = true;
    this.stopTimer();
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
