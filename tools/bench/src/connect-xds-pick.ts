// @xdskit/connect-xds's per-call decision, in process: route match over 100 routes (the call matches the last one),
// a weighted cluster pick, then the cluster's policy tree (cluster_impl -> priority -> xds_wrr_locality ->
// weighted_target over 10 localities -> round_robin over 1,000 endpoints each, 10,000 READY endpoints in all).
// Measured: time per pick (median of rounds), and heap allocated per pick once warm (gc() first, then heapUsed before
// and after a million picks, with the number of GCs during the run: none and no growth means nothing was allocated).
// Twice: without load reporting, and with an LRS handle per locality (cluster_impl wraps each pick). Also the heap
// the tree holds per 1,000 endpoints. Not a test: it prints figures, gates nothing.
import { spawnSync } from "node:child_process";
import { PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import {
  builtinLbPolicies,
  type ConnectivityState,
  createLbPolicyRegistry,
  type LbEndpoint,
  type LbHelper,
  localityLabel,
  type Picker,
  type PickInfo,
  type Subchannel,
} from "@xdskit/connect-xds";
import { ClusterImpl, createRouteTable, createUniform, intDraw } from "@xdskit/connect-xds/internal";
import type { LrsClient } from "@xdskit/orca-lrs-bridge";
import type { ClusterUpdate, Route, VirtualHost } from "@xdskit/xds-client";
import { consume, median, opsPerSecond } from "./lib/measure.js";
import { int, printTable } from "./lib/table.js";

declare const gc: () => void;
if (typeof (globalThis as { gc?: unknown }).gc !== "function") {
  const child = spawnSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url)], { stdio: "inherit" });
  process.exit(child.status ?? 1);
}

/** The transport's default random source (allocation-free once inlined). */
const uniform = createUniform();

const ROUTES = 100;
const LOCALITIES = 10;
const PER_LOCALITY = 1_000;

class ReadySubchannel implements Subchannel {
  readonly state: ConnectivityState = "READY";
  readonly lastError = undefined;
  constructor(
    readonly address: string,
    readonly endpoint: LbEndpoint,
  ) {}
  watch() {
    return () => {};
  }
  requestConnection() {}
  close() {}
}

function route(i: number, last: boolean): Route {
  const common = { hashPolicies: [], autoHostRewrite: false };
  return {
    name: `r${i}`,
    match: { path: { type: "prefix", value: `/bench.Service${i}/`, caseSensitive: true }, headers: [] },
    action: last
      ? {
          ...common,
          type: "weighted_clusters",
          weightedClusters: [
            { name: "c1", weight: 50, typedPerFilterConfig: {} },
            { name: "c2", weight: 50, typedPerFilterConfig: {} },
          ],
          totalWeight: 100,
        }
      : { ...common, type: "cluster", cluster: "other" },
    typedPerFilterConfig: {},
  };
}

const virtualHost: VirtualHost = {
  name: "bench",
  domains: ["*"],
  routes: Array.from({ length: ROUTES }, (_, i) => route(i, i === ROUTES - 1)),
  typedPerFilterConfig: {},
};

function endpoints(): LbEndpoint[] {
  const list: LbEndpoint[] = [];
  for (let l = 0; l < LOCALITIES; l++) {
    const name = { region: "r", zone: `z${l}`, subZone: "" };
    const label = localityLabel(name);
    const locality = { name, label, weight: 1 + l };
    for (let e = 0; e < PER_LOCALITY; e++) {
      list.push({
        addresses: [`10.${l}.${e >> 8}.${e & 255}:8080`],
        weight: 1,
        healthStatus: "HEALTHY",
        hostname: "",
        locality,
        path: ["priority-0", label],
      });
    }
  }
  return list;
}

const noopStats = { callStarted() {}, callFinished() {}, release() {} };
const fakeLrs = {
  orcaLrsPropagation: true,
  localityStats: () => noopStats,
  dropStats: () => ({ callDropped() {}, release() {} }),
  close: async () => {},
} as unknown as LrsClient;

/** One cluster's tree over the 10,000 endpoints; returns its picker. */
function clusterTree(name: string, withLrs: boolean): Picker {
  let picker: Picker | undefined;
  const helper: LbHelper = {
    createSubchannel: (address, endpoint) => new ReadySubchannel(address, endpoint),
    createEndpointSubchannel: (endpoint) => new ReadySubchannel(endpoint.addresses[0] ?? "", endpoint),
    requestReresolution() {},
    updateState: (_state, p) => {
      picker = p;
    },
    registry: createLbPolicyRegistry(builtinLbPolicies),
    logger: { error() {}, warn() {}, info() {}, debug() {} },
    clock: { now: () => 0, setTimeout: () => 0, clearTimeout() {} },
    random: uniform,
    randomInt: intDraw(uniform),
    target: "xds:///bench",
    metrics: { addCounter() {}, recordHistogram() {} },
  };
  const root = new ClusterImpl(helper, () => (withLrs ? fakeLrs : undefined));
  const cluster = {
    name,
    lbPolicy: [{ xds_wrr_locality_experimental: { childPolicy: [{ round_robin: {} }] } }],
    orcaPropagation: { mode: "a64" },
    ...(withLrs ? { lrsServer: { serverUri: "lrs:1", key: "lrs" } } : {}),
  } as unknown as ClusterUpdate;
  root.update({
    config: {
      cluster,
      dropOverloads: [],
      child: {
        policy: "priority_experimental",
        config: {
          priorities: ["priority-0"],
          children: new Map([["priority-0", { config: cluster.lbPolicy }]]),
        },
      },
    },
    endpoints: endpoints(),
  });
  if (picker === undefined) throw new Error("the tree published no picker");
  return picker;
}

function scenario(withLrs: boolean) {
  const selector = createRouteTable({ virtualHost, httpFilters: [], nodeId: "bench", random: uniform });
  const pickers = new Map([
    ["c1", clusterTree("c1", withLrs)],
    ["c2", clusterTree("c2", withLrs)],
  ]);
  const headers = new Headers({ "x-user": "bench" });
  const path = `/bench.Service${ROUTES - 1}/Call`;
  // The call path builds one PickInfo per call; the benchmark reuses one, so only the pick itself is measured.
  const info = { path, headers, route: undefined as unknown } as { path: string; headers: Headers; route: unknown };
  const pick = () => {
    const selection = selector.select(path, headers);
    if (selection instanceof Error) throw selection;
    info.route = selection;
    const result = pickers.get(selection.cluster)!.pick(info as PickInfo);
    if (result.type !== "complete") throw new Error(`pick: ${result.type}`);
    return result;
  };
  return pick;
}

let gcs = 0;
new PerformanceObserver((list) => {
  gcs += list.getEntries().length;
}).observe({ entryTypes: ["gc"] });

/** GC entries reach the observer asynchronously: wait a turn of the event loop before reading the count. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/**
 * Heap allocated per pick. The loop keeps its own counter: lib/measure's `consume` increments a module-level
 * number, which V8 may keep as a heap number and reallocate on each increment, and that would be counted here.
 */
async function allocation(
  pick: () => { readonly type: string },
  count: number,
): Promise<{ bytesPerPick: number; gcs: number }> {
  let complete = 0;
  for (let i = 0; i < 100_000; i++) if (pick().type === "complete") complete++;
  gc();
  gc();
  await settle();
  const gcsBefore = gcs;
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < count; i++) if (pick().type === "complete") complete++;
  const after = process.memoryUsage().heapUsed;
  consume(complete === count + 100_000);
  await settle();
  return { bytesPerPick: Math.max(0, after - before) / count, gcs: gcs - gcsBefore };
}

const rows: string[][] = [];
for (const withLrs of [false, true]) {
  const pick = scenario(withLrs);
  const rates: number[] = [];
  for (let round = 0; round < 7; round++)
    rates.push(opsPerSecond(() => consume(pick()), { sampleMs: 100, samples: 3 }));
  const rate = median(rates);
  const { bytesPerPick, gcs: gcCount } = await allocation(pick, 1_000_000);
  rows.push([
    withLrs ? "with an LRS handle per locality" : "without load reporting",
    `${((1 / rate) * 1e9).toFixed(0)} ns`,
    int(rate),
    bytesPerPick.toFixed(3),
    String(gcCount),
  ]);
}
printTable(
  `connect-xds pick: ${ROUTES} routes (the last one matches), 2 weighted clusters, ${LOCALITIES} localities, ${int(
    LOCALITIES * PER_LOCALITY,
  )} READY endpoints per cluster (goal: <= 1 us, no allocation)`,
  ["scenario", "per pick", "picks/s", "heap bytes/pick (1M picks)", "GCs during the 1M"],
  rows,
);

// Heap held by one cluster's tree (no sockets: subchannels are stand-ins), per 1,000 endpoints.
gc();
gc();
const base = process.memoryUsage().heapUsed;
const trees: Picker[] = [];
for (let i = 0; i < 5; i++) trees.push(clusterTree(`m${i}`, true));
gc();
gc();
const held = (process.memoryUsage().heapUsed - base) / 5;
consume(trees);
printTable(
  "connect-xds policy tree memory (cluster_impl with LRS handles, priority, wrr_locality, weighted_target, round_robin)",
  ["endpoints", "heap held", "per 1,000 endpoints"],
  [
    [
      int(LOCALITIES * PER_LOCALITY),
      `${int(held / 1024)} KiB`,
      `${int(held / 1024 / ((LOCALITIES * PER_LOCALITY) / 1000))} KiB`,
    ],
  ],
);
