// fake-helper.ts's subchannels and clock, plus what the issue 21 policies' tests need: picks with headers and hash
// policies, recorded metrics, a seeded random source and a chosen registry. Real connections are exercised by
// test/advanced-policies.test.ts.
import type { HashPolicy } from "@xdskit/xds-client";
import type { RouteSelection } from "../../src/balancer/config-selector.js";
import type {
  ConnectivityState,
  LbEndpoint,
  LbHelper,
  LbPolicyFactory,
  Picker,
  PickInfo,
  PickResult,
} from "../../src/balancer/lb-policy.js";
import { createLbPolicyRegistry } from "../../src/balancer/lb-registry.js";
import { FakeSubchannel, VirtualClock } from "./fake-helper.js";

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
  const clock = new VirtualClock();
  const states: ConnectivityState[] = [];
  const counters: Harness["counters"] = [];
  const histograms: Harness["histograms"] = [];
  let picker: Picker | undefined;
  const noop = () => {};
  const helper: LbHelper = {
    createSubchannel(address, endpoint) {
      const sub = new FakeSubchannel(address, endpoint);
      subchannels.set(address, sub);
      return sub;
    },
    createEndpointSubchannel: (endpoint) => helper.createSubchannel(endpoint.addresses[0] ?? "", endpoint),
    requestReresolution: noop,
    updateState(state, p) {
      states.push(state);
      picker = p;
    },
    registry: createLbPolicyRegistry(factories),
    logger: { error: noop, warn: noop, info: noop, debug: noop, trace: noop } as unknown as LbHelper["logger"],
    clock,
    random,
    randomInt: (bound) => Math.floor(random() * bound),
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
