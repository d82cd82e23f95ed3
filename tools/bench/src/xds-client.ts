// The xds-client (core and resource types) beside @grpc/grpc-js-xds, in one run against one @xdskit/control-plane
// on 127.0.0.1. Each client runs alone in a child process. Scenarios:
//   - 10,000 EDS watches made in one tick: how long the calls take, how many requests and names reach the server;
//   - one response with 10,000 EDS resources, one with 10,000 clusters, one EDS resource with 10,000 and with
//     100,000 endpoints: from the server sending the held responses to the last watcher callback;
// and the peak RSS of each client's process. A response to 10,000 watches is decoded once, cold, by a fresh process:
// one shot of it moves by a quarter between runs, so those two scenarios run RUNS times (ours and theirs alternating)
// and each figure is the median, with each run's times printed under the table.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Message } from "@bufbuild/protobuf";
import { buildCluster, buildClusterLoadAssignment, createManagementServer } from "@xdskit/control-plane";
import { medianOfRuns } from "./lib/measure.js";
import { int, printTable, ratio } from "./lib/table.js";

const TYPE_URLS = {
  eds: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
  cds: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
} as const;
const worker = join(dirname(fileURLToPath(import.meta.url)), "workers", "xds-client-worker.js");
const now = () => performance.timeOrigin + performance.now();

function address(i: number): string {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:8080`;
}

function endpointsResource(name: string, endpoints: number, seed: number) {
  return buildClusterLoadAssignment({
    clusterName: name,
    localities: [
      { region: "r", zone: `z${seed % 3}`, endpoints: Array.from({ length: endpoints }, (_, i) => address(seed + i)) },
    ],
  });
}

interface Scenario {
  readonly label: string;
  readonly kind: keyof typeof TYPE_URLS;
  readonly prefix: string;
  readonly count: number;
  readonly resources: () => Message[];
  /** Only the watch-heavy scenario reports the request figures. */
  readonly requestFigures: boolean;
  /** Client processes per client: each figure is their median. */
  readonly runs: number;
}

const RUNS = 3;

const scenarios: Scenario[] = [
  {
    label: "10,000 EDS resources, each watched",
    kind: "eds",
    prefix: "cluster",
    count: 10_000,
    resources: () => Array.from({ length: 10_000 }, (_, i) => endpointsResource(`cluster-${i}`, 1, i * 4)),
    requestFigures: true,
    runs: RUNS,
  },
  {
    label: "10,000 clusters, each watched",
    kind: "cds",
    prefix: "cluster",
    count: 10_000,
    resources: () =>
      Array.from({ length: 10_000 }, (_, i) => buildCluster({ name: `cluster-${i}`, edsServiceName: `eds-${i}` })),
    requestFigures: false,
    runs: RUNS,
  },
  {
    label: "1 EDS resource with 10,000 endpoints",
    kind: "eds",
    prefix: "big",
    count: 1,
    resources: () => [endpointsResource("big", 10_000, 0)],
    requestFigures: false,
    runs: 1,
  },
  {
    label: "1 EDS resource with 100,000 endpoints",
    kind: "eds",
    prefix: "big",
    count: 1,
    resources: () => [endpointsResource("big", 100_000, 0)],
    requestFigures: false,
    runs: 1,
  },
];

interface Result {
  readonly watchMs: number;
  readonly requests: number;
  readonly namesSent: number;
  readonly subscribedMs: number;
  readonly deliverMs: number;
  readonly peakRssMb: number;
}

async function measure(which: "xdskit" | "grpc-js-xds", scenario: Scenario): Promise<Result> {
  const typeUrl = TYPE_URLS[scenario.kind];
  const server = await createManagementServer({ host: "127.0.0.1", port: 0, historyLimit: 100 });
  try {
    server.setResources(scenario.resources());
    server.hooks.hold({ typeUrl });
    let requests = 0;
    let namesSent = 0;
    let allSubscribedAt = 0;
    let subscribed!: () => void;
    const allSubscribed = new Promise<void>((resolve) => {
      subscribed = resolve;
    });
    server.hooks.on("request", (event) => {
      if (event.typeUrl !== typeUrl || event.kind !== "sotw") return;
      requests += 1;
      namesSent += event.resourceNames.length;
      if (event.resourceNames.length === scenario.count && allSubscribedAt === 0) {
        allSubscribedAt = now();
        subscribed();
      }
    });
    const args = [worker, which, String(server.port), scenario.kind, scenario.prefix, String(scenario.count)];
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    const events: Record<string, { t: number; start?: number; maxRssKb?: number }> = {};
    let buffered = "";
    const finished = new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        buffered += chunk.toString();
        let nl = buffered.indexOf("\n");
        while (nl >= 0) {
          const line = JSON.parse(buffered.slice(0, nl));
          events[line.event] = line;
          buffered = buffered.slice(nl + 1);
          nl = buffered.indexOf("\n");
        }
      });
      child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${which} worker exited with ${code}`))));
    });
    await allSubscribed;
    // Let any trailing requests arrive, then send the held responses.
    await new Promise((r) => setTimeout(r, 200));
    const releasedAt = now();
    server.hooks.release({ typeUrl });
    await finished;
    const watched = events.watched!;
    const done = events.done!;
    return {
      watchMs: watched.t - watched.start!,
      requests,
      namesSent,
      subscribedMs: allSubscribedAt - watched.start!,
      deliverMs: done.t - releasedAt,
      peakRssMb: (done.maxRssKb ?? 0) / 1024,
    };
  } finally {
    await server.close();
  }
}

const ms = (n: number) => n.toFixed(1);
const row = (label: string, a: number, b: number, format: (n: number) => string) => [
  label,
  format(a),
  format(b),
  ratio(b / a),
];
const rows: string[][] = [];
const perRun: string[] = [];
for (const scenario of scenarios) {
  const oursRuns: Result[] = [];
  const theirsRuns: Result[] = [];
  for (let run = 0; run < scenario.runs; run++) {
    oursRuns.push(await measure("xdskit", scenario));
    theirsRuns.push(await measure("grpc-js-xds", scenario));
  }
  const ours = medianOfRuns(oursRuns);
  const theirs = medianOfRuns(theirsRuns);
  if (scenario.runs > 1) {
    const each = oursRuns.map((r, i) => `${ms(r.deliverMs)} against ${ms(theirsRuns[i]!.deliverMs)}`).join(", ");
    perRun.push(
      `${scenario.label}, response sent to last callback, each run (xdskit against grpc-js-xds, ms): ${each}`,
    );
  }
  if (scenario.requestFigures) {
    rows.push(
      row(`${scenario.label}: watch() calls in one tick (ms)`, ours.watchMs, theirs.watchMs, ms),
      row(`${scenario.label}: requests the server received`, ours.requests, theirs.requests, int),
      row(`${scenario.label}: resource names in those requests`, ours.namesSent, theirs.namesSent, int),
      row(`${scenario.label}: first watch to every name subscribed (ms)`, ours.subscribedMs, theirs.subscribedMs, ms),
    );
  }
  rows.push(
    row(`${scenario.label}: response sent to last callback (ms)`, ours.deliverMs, theirs.deliverMs, ms),
    row(`${scenario.label}: peak RSS of the client process (MiB)`, ours.peakRssMb, theirs.peakRssMb, ms),
  );
}
printTable(
  `xds-client vs @grpc/grpc-js-xds 1.14.1 against @xdskit/control-plane on 127.0.0.1 (each client in its own process; the 10,000-watch rows are medians of ${RUNS} processes per client)`,
  ["measure", "@xdskit/xds-client", "@grpc/grpc-js-xds", "grpc-js-xds / xdskit"],
  rows,
);
for (const line of perRun) console.log(line);
