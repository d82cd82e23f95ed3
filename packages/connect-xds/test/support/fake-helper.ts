// A helper for driving policies by hand: subchannels whose state the test sets, a virtual clock, and a record of
// every state and picker the policy published.

import {
  builtinLbPolicies,
  type ConnectivityState,
  createLbPolicyRegistry,
  type LbEndpoint,
  type LbHelper,
  type Picker,
  type PickInfo,
  type PickResult,
  type Subchannel,
} from "../../src/index.js";
import { createWorkSerializer } from "../../src/shared/work-serializer.js";
import { createEndpointSubchannel, type EndpointSubchannelBase } from "../../src/subchannels/endpoint-subchannel.js";

export class FakeSubchannel implements Subchannel {
  state: ConnectivityState = "IDLE";
  lastError: Error | undefined;
  connectRequests = 0;
  closed = false;
  private listeners: ((state: ConnectivityState) => void)[] = [];
  constructor(
    readonly address: string,
    readonly endpoint: LbEndpoint,
  ) {}
  watch(listener: (state: ConnectivityState) => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }
  requestConnection(): void {
    this.connectRequests++;
  }
  close(): void {
    this.closed = true;
  }
  /** Moves the subchannel and tells its policy, as the work serializer would. */
  set(state: ConnectivityState, error?: Error): void {
    this.state = state;
    this.lastError = error;
    for (const listener of [...this.listeners]) listener(state);
  }
}

export class VirtualClock {
  private time = 0;
  private timers: { at: number; callback: () => void; id: number }[] = [];
  private nextId = 1;
  now = (): number => this.time;
  setTimeout = (callback: () => void, ms: number): unknown => {
    const id = this.nextId++;
    this.timers.push({ at: this.time + ms, callback, id });
    return id;
  };
  clearTimeout = (handle: unknown): void => {
    this.timers = this.timers.filter((timer) => timer.id !== handle);
  };
  /** The id of the last timer set (ids grow by one). */
  get lastTimerId(): number {
    return this.nextId - 1;
  }
  /** The due times of the pending timers set after timer `afterId`, in the order they were set. */
  pendingAfter(afterId = 0): number[] {
    return this.timers.filter((timer) => timer.id > afterId).map((timer) => timer.at);
  }
  /** Runs every timer due within `ms`, in time order. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const due = this.timers.filter((timer) => timer.at <= end).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((timer) => timer !== due);
      this.time = due.at;
      due.callback();
    }
    this.time = end;
  }
}

export interface Harness {
  readonly helper: LbHelper;
  readonly clock: VirtualClock;
  /** How many times the policy asked for re-resolution. */
  readonly reresolutions: number;
  /** Every subchannel created, in order. */
  readonly subchannels: FakeSubchannel[];
  readonly published: { state: ConnectivityState; picker: Picker }[];
  /** The last published state. */
  state(): ConnectivityState | undefined;
  /** Picks `n` times with the last picker; the addresses of complete picks, or the result type. */
  pick(n?: number): string[];
  /** The open (not closed) subchannel for `address`. */
  subchannel(address: string): FakeSubchannel;
}

const INFO = { path: "/s/m", headers: new Headers() } as unknown as PickInfo;

export function describePick(result: PickResult): string {
  return result.type === "complete" ? result.subchannel.address : result.type;
}

export function createHarness(random: () => number = Math.random): Harness {
  const clock = new VirtualClock();
  const subchannels: FakeSubchannel[] = [];
  const published: { state: ConnectivityState; picker: Picker }[] = [];
  const base: EndpointSubchannelBase = {
    createSubchannel(address, endpoint) {
      const subchannel = new FakeSubchannel(address, endpoint);
      subchannels.push(subchannel);
      return subchannel;
    },
    registry: createLbPolicyRegistry(builtinLbPolicies),
    logger: { error() {}, warn() {}, info() {}, debug() {} },
    clock,
    random,
    randomInt: (bound) => Math.floor(random() * bound),
    target: "xds:///test",
    metrics: { addCounter() {}, recordHistogram() {} },
  };
  const serializer = createWorkSerializer((error) => {
    throw error;
  });
  let reresolutions = 0;
  const helper: LbHelper = {
    ...base,
    createEndpointSubchannel: (endpoint) => createEndpointSubchannel(endpoint, base, serializer),
    requestReresolution: () => {
      reresolutions++;
    },
    updateState: (state, picker) => published.push({ state, picker }),
  };
  return {
    get reresolutions() {
      return reresolutions;
    },
    helper,
    clock,
    subchannels,
    published,
    state: () => published.at(-1)?.state,
    pick(n = 1) {
      const picker = published.at(-1)?.picker;
      if (picker === undefined) throw new Error("nothing published");
      return Array.from({ length: n }, () => describePick(picker.pick(INFO)));
    },
    subchannel(address) {
      const found = subchannels.filter((s) => s.address === address && !s.closed).at(-1);
      if (found === undefined) throw new Error(`no open subchannel for ${address}`);
      return found;
    },
  };
}

/** Endpoints for tests: `priority-<p>` / locality `zone` paths, as the cluster manager builds them. */
export function endpoint(address: string, zone = "z", priority = 0, localityWeight = 1): LbEndpoint {
  const label = `{region="", zone="${zone}", sub_zone=""}`;
  return {
    addresses: [address],
    weight: 1,
    healthStatus: "HEALTHY",
    hostname: "",
    locality: { name: { region: "", zone, subZone: "" }, label, weight: localityWeight },
    path: [`priority-${priority}`, label],
  };
}
