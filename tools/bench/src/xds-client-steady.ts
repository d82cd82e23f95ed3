// The xds-client's steady-state costs beside @grpc/grpc-js-xds (issue 13), each client in a child process of its own
// (workers/xds-client-steady-worker.ts):
//   - a SotW re-push of N clusters with one changed: from the server writing the response to the callback of the
//     changed cluster, against a re-push with all N changed in the same warm process (a full decode); the same with
//     the clusters in reverse order; the same over delta (only the changed resource sent; grpc-js-xds has no delta);
//   - watcher churn: 1,000 watchers coming and going per second: requests the server received, heap before and after;
//   - import + client creation in a fresh process (median of several processes), and the same to the first CDS
//     resource delivered (what is loaded later, when first used, is counted there);
//   - the heap a client holds per cached resource (cluster, listener, route configuration, cluster load assignment),
//     counted from its first cached resource on (what is loaded or set up once, xdskit lazily, grpc-js-xds at import,
//     is not a per-resource cost).
// `--quick` shrinks the churn to 10 s, the rounds to 3 and the cache to 20,000 clusters (the table says so);
// `--only <scenario>` runs one of repush, churn, cold, heap; `--kind <cds|lds|rds|eds>` the heap rows of one type.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { type Any, anyPack } from "@bufbuild/protobuf/wkt";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  createManagementServer,
} from "@xdskit/control-plane";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { ClusterLoadAssignmentSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import { ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import { RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryResponseSchema,
  type DiscoveryRequest,
  DiscoveryResponseSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { median } from "./lib/measure.js";
import { type RawServerCall, serveRawAds } from "./lib/raw-ads.js";
import { int, printTable, ratio } from "./lib/table.js";

const quick = process.argv.includes("--quick");
const onlyAt = process.argv.indexOf("--only");
/** `--only repush|churn|cold|heap` runs one scenario. */
const runs = (scenario: string) => onlyAt < 0 || process.argv[onlyAt + 1] === scenario;
const kindAt = process.argv.indexOf("--kind");
/** `--kind cds|lds|rds|eds` measures the heap of one resource type. */
const measured = (kind: string) => kindAt < 0 || process.argv[kindAt + 1] === kind;
const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
const worker = join(dirname(fileURLToPath(import.meta.url)), "workers", "xds-client-steady-worker.js");
const now = () => performance.timeOrigin + performance.now();
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Which = "xdskit" | "grpc-js-xds";
type Event = { event: string; t?: number } & Record<string, number>;

/** A worker process: its events as they come (`waitFor`), and all of them by name once it exits. */
function startWorker(args: readonly string[]) {
  const child = spawn(process.execPath, ["--expose-gc", worker, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  const events: Record<string, Event> = {};
  const waiting = new Map<string, (e: Event) => void>();
  let buffered = "";
  child.stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      const event = JSON.parse(buffered.slice(0, nl)) as Event;
      buffered = buffered.slice(nl + 1);
      events[event.event] = event;
      waiting.get(event.event)?.(event);
      waiting.delete(event.event);
    }
  });
  let killed = false;
  const exited = new Promise<Record<string, Event>>((resolve, reject) =>
    child.on("exit", (code) =>
      code === 0 || killed ? resolve(events) : reject(new Error(`worker ${args.join(" ")}: ${code}`)),
    ),
  );
  return {
    /** The next `name` event from now on (earlier ones, and ones nobody waits for, are dropped). */
    waitFor: (name: string) => new Promise<Event>((resolve) => waiting.set(name, resolve)),
    exited,
    stop(): Promise<unknown> {
      killed = true;
      child.kill();
      return exited;
    },
  };
}

const runWorker = (args: readonly string[]) => startWorker(args).exited;

const cluster = (i: number, eds = `eds-${i}`) =>
  anyPack(ClusterSchema, buildCluster({ name: `cluster-${i}`, edsServiceName: eds }));

/**
 * A raw ADS server for one type (CDS unless told): once the client subscribed to `count` names (and 200 ms passed
 * without a request, for clients that send one request per watch), writes `first`; `send` writes more later.
 * Responses are pre-encoded.
 */
async function adsServer(api: "sotw" | "delta", count: number, first: Uint8Array, typeUrl = CDS) {
  let call: RawServerCall | undefined;
  let firstAt = 0;
  let quiet: ReturnType<typeof setTimeout> | undefined;
  const subscribed = new Set<string>();
  const server = await serveRawAds(api, (c) => {
    call = c;
    c.on("data", (request: DiscoveryRequest | DeltaDiscoveryRequest) => {
      if (request.typeUrl !== typeUrl || firstAt !== 0) return;
      if ("resourceNames" in request) {
        subscribed.clear();
        for (const name of request.resourceNames) subscribed.add(name);
      } else for (const name of request.resourceNamesSubscribe) subscribed.add(name);
      if (subscribed.size < count) return;
      clearTimeout(quiet);
      quiet = setTimeout(() => {
        firstAt = now();
        c.write(Buffer.from(first));
      }, 200);
    });
  });
  return {
    port: server.address.split(":")[1]!,
    firstAt: () => firstAt,
    send(bytes: Uint8Array): number {
      const at = now();
      call!.write(Buffer.from(bytes));
      return at;
    },
    close: () => server.close(),
  };
}

/**
 * What a response changes: nothing (the first), every cluster, or the middle one only (on top of the "all" response
 * before it); SotW "reordered" lists the clusters in reverse order besides.
 */
type Change = "none" | "middle" | "reordered" | "all";
function edsName(i: number, count: number, change: Change, round: number): string {
  if (change === "none") return `eds-${i}`;
  if (change === "all" || i === count >> 1) return `eds-${i}-r${round}`;
  // The others as the "all" response sent before: the round before a "middle", two before a "reordered".
  return `eds-${i}-r${round - (change === "middle" ? 1 : 2)}`;
}

function sotwResponse(count: number, change: Change, round: number) {
  const resources = Array.from({ length: count }, (_, i) => cluster(i, edsName(i, count, change, round)));
  if (change === "reordered") resources.reverse();
  const version = String(round);
  return toBinary(
    DiscoveryResponseSchema,
    create(DiscoveryResponseSchema, { versionInfo: version, typeUrl: CDS, nonce: version, resources }),
  );
}

function deltaResponse(count: number, change: Change, round: number) {
  const indices =
    change === "middle" || change === "reordered" ? [count >> 1] : Array.from({ length: count }, (_, i) => i);
  const version = String(round);
  const resources = indices.map((i) => ({
    name: `cluster-${i}`,
    version,
    resource: cluster(i, edsName(i, count, change, round)),
  }));
  return toBinary(
    DeltaDiscoveryResponseSchema,
    create(DeltaDiscoveryResponseSchema, { systemVersionInfo: version, typeUrl: CDS, nonce: version, resources }),
  );
}

/**
 * The first response (every cluster new, in a cold process), then `rounds` times: every cluster changed (a full
 * decode, to the callback of the last cluster of the response), only the middle one changed (to its callback), and
 * the middle one changed again with every cluster in another order (SotW; delta sends the one resource again).
 */
async function repush(which: Which, api: "sotw" | "delta", count: number, rounds: number) {
  const encode = api === "sotw" ? sotwResponse : deltaResponse;
  const responses = Array.from({ length: rounds }, (_, r) => ({
    all: encode(count, "all", 2 + 3 * r),
    middle: encode(count, "middle", 3 + 3 * r),
    reordered: encode(count, "reordered", 4 + 3 * r),
  }));
  const server = await adsServer(api, count, encode(count, "none", 1));
  const child = startWorker(["repush", which, server.port, String(count), api === "sotw" ? "GRPC" : "DELTA_GRPC"]);
  try {
    const firstMs = (await child.waitFor("all")).t! - server.firstAt();
    const fullMs: number[] = [];
    const changedMs: number[] = [];
    const reorderedMs: number[] = [];
    /** Sends a response once the previous one's callbacks ran and its ACK had time to land; ms to the `event`. */
    const timed = async (bytes: Uint8Array, event: string) => {
      await pause(200);
      const seen = child.waitFor(event);
      const at = server.send(bytes);
      return (await seen).t! - at;
    };
    for (const { all, middle, reordered } of responses) {
      fullMs.push(await timed(all, "last"));
      changedMs.push(await timed(middle, "middle"));
      reorderedMs.push(await timed(reordered, "middle"));
    }
    return {
      firstMs,
      fullMs: median(fullMs),
      changedMs: median(changedMs),
      reorderedMs: median(reorderedMs),
    };
  } finally {
    await child.stop();
    await server.close();
  }
}

async function churn(which: Which, seconds: number) {
  const pool = 10_000;
  const server = await createManagementServer({ host: "127.0.0.1", port: 0 });
  try {
    server.setResources(
      Array.from({ length: pool }, (_, i) => buildCluster({ name: `cluster-${i}`, edsServiceName: `eds-${i}` })),
    );
    let requests = 0;
    server.hooks.on("request", (event) => {
      if (event.typeUrl === CDS) requests += 1;
    });
    const events = await runWorker(["churn", which, String(server.port), String(seconds), "1000", String(pool)]);
    const e = events.churned!;
    return { requests, heapBefore: e.heapBefore!, heapAfter: e.heapAfter!, watches: e.watches! };
  } finally {
    await server.close();
  }
}

/** The resource types the heap rows cover, with the resources a server sends for each (named `<kind>-<i>`). */
const HEAP_KINDS = {
  cds: {
    label: "cluster",
    typeUrl: CDS,
    resource: (i: number) => anyPack(ClusterSchema, buildCluster({ name: `cds-${i}`, edsServiceName: `eds-${i}` })),
  },
  lds: {
    label: "listener",
    typeUrl: "type.googleapis.com/envoy.config.listener.v3.Listener",
    resource: (i: number) => anyPack(ListenerSchema, buildListener({ name: `lds-${i}`, routeConfigName: `rds-${i}` })),
  },
  rds: {
    label: "route configuration",
    typeUrl: "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
    resource: (i: number) =>
      anyPack(RouteConfigurationSchema, buildRouteConfiguration({ name: `rds-${i}`, cluster: `cds-${i}` })),
  },
  eds: {
    label: "cluster load assignment (2 endpoints)",
    typeUrl: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
    resource: (i: number) =>
      anyPack(
        ClusterLoadAssignmentSchema,
        buildClusterLoadAssignment({
          clusterName: `eds-${i}`,
          localities: [{ region: "r", zone: "z", endpoints: [endpoint(2 * i), endpoint(2 * i + 1)] }],
        }),
      ),
  },
} satisfies Record<string, { label: string; typeUrl: string; resource: (i: number) => Any }>;
type HeapKind = keyof typeof HEAP_KINDS;

function endpoint(i: number): string {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:8080`;
}

async function heapHolding(which: Which, kind: HeapKind, count: number): Promise<number> {
  const { typeUrl, resource } = HEAP_KINDS[kind];
  const resources = Array.from({ length: count }, (_, i) => resource(i));
  const response = toBinary(
    DiscoveryResponseSchema,
    create(DiscoveryResponseSchema, { versionInfo: "1", typeUrl, nonce: "1", resources }),
  );
  const server = await adsServer("sotw", count, response, typeUrl);
  try {
    const events = await runWorker(["heap", which, server.port, String(count), kind]);
    return events.held!.heapAfter!;
  } finally {
    await server.close();
  }
}

/**
 * Heap per cached resource between holding `from` and holding `to` (each in a fresh process, after a GC): what a
 * client loads or sets up once, xdskit when first used and grpc-js-xds at import, cancels out.
 */
async function heldPer(which: Which, kind: HeapKind, from: number, to: number): Promise<number> {
  return ((await heapHolding(which, kind, to)) - (await heapHolding(which, kind, from))) / (to - from);
}

async function coldMs(which: Which, runs: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push((await runWorker(["cold", which])).cold!.ms!);
  return median(times);
}

/**
 * Import, create, watch one cluster, until its callback: a fresh process per run, against a raw ADS server that answers
 * each stream's first CDS request at once with a pre-encoded response.
 */
async function firstResourceMs(which: Which, runs: number): Promise<number> {
  const response = sotwResponse(1, "none", 1);
  const server = await serveRawAds("sotw", (call) =>
    call.on("data", (request: DiscoveryRequest) => {
      if (request.typeUrl === CDS && request.responseNonce === "") call.write(Buffer.from(response));
    }),
  );
  try {
    const port = server.address.split(":")[1]!;
    const times: number[] = [];
    for (let i = 0; i < runs; i++) times.push((await runWorker(["first", which, port])).first!.ms!);
    return median(times);
  } finally {
    await server.close();
  }
}

const ms = (n: number) => n.toFixed(1);
const mib = (n: number) => (n / 2 ** 20).toFixed(1);
const rows: string[][] = [];
const pair = (label: string, ours: number, theirs: number | undefined, format: (n: number) => string) =>
  rows.push([
    label,
    format(ours),
    theirs === undefined ? "-" : format(theirs),
    theirs === undefined ? "-" : ratio(theirs / ours),
  ]);

if (runs("repush")) {
  const N = 10_000;
  const rounds = quick ? 3 : 9;
  const oursSotw = await repush("xdskit", "sotw", N, rounds);
  const theirsSotw = await repush("grpc-js-xds", "sotw", N, rounds);
  const oursDelta = await repush("xdskit", "delta", N, rounds);
  const x = (n: number) => `${n.toFixed(3)}x`;
  type Figure = "fullMs" | "changedMs" | "reorderedMs";
  /** A SotW time, both clients; then what share of the full decode it is. */
  const sotw = (label: string, figure: Figure) =>
    pair(`${label}, median of ${rounds} (ms)`, oursSotw[figure], theirsSotw[figure], ms);
  const share = (label: string, figure: Figure) =>
    pair(label, oursSotw[figure] / oursSotw.fullMs, theirsSotw[figure] / theirsSotw.fullMs, x);
  pair(
    `${int(N)} clusters, first SotW response, cold process: sent to last callback (ms)`,
    oursSotw.firstMs,
    theirsSotw.firstMs,
    ms,
  );
  sotw(`SotW, all ${int(N)} changed (full decode): sent to last cluster's callback`, "fullMs");
  sotw(`SotW re-push of the ${int(N)}, one changed: sent to its callback`, "changedMs");
  share("  SotW one changed / full decode (goal <= 0.15x, issue 37)", "changedMs");
  pair(
    `delta, all ${int(N)} changed: sent to last cluster's callback, median of ${rounds} (ms)`,
    oursDelta.fullMs,
    undefined,
    ms,
  );
  pair(
    `delta, the one changed resource sent: to its callback, median of ${rounds} (ms)`,
    oursDelta.changedMs,
    undefined,
    ms,
  );
  pair("  delta all changed / SotW full decode (goal <= 1.0x)", oursDelta.fullMs / oursSotw.fullMs, undefined, x);
  pair("  delta one changed / SotW full decode", oursDelta.changedMs / oursSotw.fullMs, undefined, x);
  sotw(`SotW re-push, one changed, the ${int(N)} in reverse order: sent to its callback`, "reorderedMs");
  share("  SotW reordered one changed / full decode", "reorderedMs");
}
if (runs("churn")) {
  const seconds = quick ? 10 : 60;
  const oursChurn = await churn("xdskit", seconds);
  const theirsChurn = await churn("grpc-js-xds", seconds);
  const churnLabel = `churn, 1,000 watchers/s for ${seconds} s${quick ? " (--quick)" : ""}`;
  pair(`${churnLabel}: watches made`, oursChurn.watches, theirsChurn.watches, int);
  pair(`${churnLabel}: CDS requests the server received`, oursChurn.requests, theirsChurn.requests, int);
  pair(`${churnLabel}: heap after the first second (MiB)`, oursChurn.heapBefore, theirsChurn.heapBefore, mib);
  pair(`${churnLabel}: heap at the end, watchers gone (MiB)`, oursChurn.heapAfter, theirsChurn.heapAfter, mib);
}
if (runs("cold")) {
  const processes = quick ? 3 : 7;
  pair(
    `import + client creation in a fresh process, median of ${processes} (ms)`,
    await coldMs("xdskit", processes),
    await coldMs("grpc-js-xds", processes),
    ms,
  );
  pair(
    `import + client creation + first CDS resource delivered, fresh process, median of ${processes} (ms)`,
    await firstResourceMs("xdskit", processes),
    await firstResourceMs("grpc-js-xds", processes),
    ms,
  );
}

if (runs("heap")) {
  const big = quick ? 20_000 : 100_000;
  const small = 10_000;
  for (const kind of (Object.keys(HEAP_KINDS) as HeapKind[]).filter(measured)) {
    const { label } = HEAP_KINDS[kind];
    pair(
      `heap per cached ${label}, from 1,000 to ${int(small)} watched (bytes)`,
      await heldPer("xdskit", kind, 1_000, small),
      await heldPer("grpc-js-xds", kind, 1_000, small),
      int,
    );
    // grpc-js-xds sends one request per watch listing every name so far: 100,000 watches would be 5 billion names.
    pair(
      `heap per cached ${label}, from ${int(small)} to ${int(big)} watched (bytes)${quick ? " (--quick)" : ""}`,
      await heldPer("xdskit", kind, small, big),
      undefined,
      int,
    );
  }
}

printTable(
  "xds-client steady-state costs vs @grpc/grpc-js-xds 1.14.1 (raw ADS server or @xdskit/control-plane on 127.0.0.1; each client in its own process)",
  ["measure", "@xdskit/xds-client", "@grpc/grpc-js-xds", "grpc-js-xds / xdskit"],
  rows,
);
