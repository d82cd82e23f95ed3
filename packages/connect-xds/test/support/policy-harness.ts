// A scripted LbHelper for the policies' state-machine tests: fake subchannels whose state a test sets, a virtual
// clock, a seeded random source and recorded metrics. Real connections are exercised by the HTTP/2 tests.
import type { HashPolicy } from "@xdskit/xds-client";
import type { RouteSelection } from "../../src/config-selector.js";
import type {
  ConnectivityState,
  LbEndpoint,
  LbHelper,
  LbPolicyFactory,
  Picker,
  PickInfo,
  PickResult,
  Subchannel,
} from "../../src/lb-policy.js";
import { createLbPolicyRegistry } from "../../src/lb-registry.js";

export interface FakeSubchannel extends Subchannel {
  connectRequests: number;
  closed: boolean;
  setState(state: ConnectivityState, error?: Error): void;
}

export function fakeSubchannel(address: string, endpoint: LbEndpoint): FakeSubchannel {
  const listeners = new Set<(s: ConnectivityState) => void>();
  let state: ConnectivityState = "IDLE";
  let lastError: Error | undefined;
  const sub: FakeSubchannel = {
    address,
    endpoint,
    connectRequests: 0,
    closed: false,
    get state() {
      return state;
    },
    get lastError() {
      return lastError;
    },
    watch(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    requestConnection() {
      sub.connectRequests++;
    },
    close() {
      sub.closed = true;
    },
    setState(next, error) {
      state = next;
      lastError = error;
      for (const l of [...listeners]) l(next);
    },
  };
  return sub;
}

export interface VirtualClock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Moves time forward, running due timers in order. */
  advance(ms: number): void;
}

export function virtualClock(): VirtualClock {
  let now = 0;
  let nextId = 1;
  const timers = new Map<number, { at: number; callback: () => void }>();
  return {
    now: () => now,
    setTimeout(callback, ms) {
      const id = nextId++;
      timers.set(id, { at: now + ms, callback });
      return id;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      const end = now + ms;
      for (;;) {
        let due: [number, { at: number; callback: () => void }] | undefined;
        for (const t of timers) if (t[1].at <= end && (due === undefined || t[1].at < due[1].at)) due = t;
        if (due === undefined) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].callback();
      }
      now = end;
    },
  };
}

/** A deterministic [0, 1) source. */
export function seededRandom(seed = 42): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export interface Harness {
  readonly helper: LbHelper;
  readonly subchannels: Map<string, FakeSubchannel>;
  readonly clock: VirtualClock;
  readonly states: ConnectivityState[];
  readonly counters: { name: string; value: number; labels: Readonly<Record<string, string>> }[];
  readonly histograms: { name: string; value: number; labels: Readonly<Record<string, string>> }[];
  /** The last published state and picker. */
  readonly state: ConnectivityState | undefined;
  readonly picker: Picker | undefined;
  sub(address: string): FakeSubchannel;
  pick(headers?: ConstructorParameters<typeof Headers>[0], hashPolicies?: readonly HashPolicy[]): PickResult;
}

export function createHarness(
  random: () => number = seededRandom(),
  factories: readonly LbPolicyFactory[] = [],
): Harness {
  const subchannels = new Map<string, FakeSubchannel>();
  const clock = virtualClock();
  const states: ConnectivityState[] = [];
  const counters: Harness["counters"] = [];
  const histograms: Harness["histograms"] = [];
  let picker: Picker | undefined;
  const noop = () => {};
  const helper: LbHelper = {
    createSubchannel(address, endpoint) {
      const sub = fakeSubchannel(address, endpoint);
      subchannels.set(address, sub);
      return sub;
    },
    updateState(state, p) {
      states.push(state);
      picker = p;
    },
    registry: createLbPolicyRegistry(factories),
    logger: { error: noop, warn: noop, info: noop, debug: noop, trace: noop } as unknown as LbHelper["logger"],
    clock,
    random,
    target: "xds:///test",
    metrics: {
      addCounter: (name, value, labels) => counters.push({ name, value, labels }),
      recordHistogram: (name, value, labels) => histograms.push({ name, value, labels }),
    },
  };
  return {
    helper,
    subchannels,
    clock,
    states,
    counters,
    histograms,
    get state() {
      return states[states.length - 1];
    },
    get picker() {
      return picker;
    },
    sub(address) {
      const s = subchannels.get(address);
      if (s === undefined) throw new Error(`no subchannel for ${address}`);
      return s;
    },
    pick(headers, hashPolicies = []) {
      if (picker === undefined) throw new Error("nothing published yet");
      const info: PickInfo = {
        path: "/grpc.testing.TestService/UnaryCall",
        headers: new Headers(headers),
        route: { hashPolicies } as unknown as RouteSelection,
      };
      return picker.pick(info);
    },
  };
}

/** An endpoint as EDS gives it. */
export function endpoint(address: string, weight = 1, localityWeight = 1, zone = "z"): LbEndpoint {
  return {
    addresses: [address],
    weight,
    healthStatus: "HEALTHY",
    hostname: "",
    locality: {
      name: { region: "r", zone, subZone: "" },
      label: `{region="r", zone="${zone}", sub_zone=""}`,
      weight: localityWeight,
    },
    path: [],
  };
}

/** Lets queued microtasks (connection requests made outside picks) run. */
export const flushMicrotasks = () => new Promise<void>((resolve) => setImmediate(resolve));
