// ORCA parsing and load recording (@xdskit/orca-lrs-bridge), beside @grpc/grpc-js's own ORCA parsing in the same
// process. Steps:
//  1. Parse a typical `endpoint-load-metrics-bin` trailer (cpu, mem, application and two named metrics): ours from
//     the base64 text (what Connect hands over) and from bytes (what grpc-js hands over), and grpc-js's own decoder
//     (the proto-loader deserializer its `createMetricsReader` uses, loaded the way grpc-js loads it).
//  2. Record a call (callStarted + callFinished with that 5-metric report, A85 selecting all five): time per call,
//     and heap bytes allocated per call once warm (gc() first, then heapUsed before/after, with the GC count
//     during the run: a run with no GC and no heap growth allocated nothing).
//  3. One million calls across 100 localities, then one LRS report of it all (built and encoded).
// Not a test: it prints figures and ratios, and gates nothing.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { PerformanceObserver, performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  createLoadStore,
  decodeOrcaBinaryTrailer,
  decodeOrcaLoadReport,
  parseLrsReportEndpointMetrics,
} from "@xdskit/orca-lrs-bridge";
import { LoadStatsRequestSchema } from "@xdskit/protos/envoy/service/load_stats/v3/lrs_pb";
import { OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { consume, median, opsPerSecond } from "./lib/measure.js";
import { int, printTable, ratio } from "./lib/table.js";

declare const gc: () => void;

if (typeof (globalThis as { gc?: unknown }).gc !== "function") {
  // Heap measurements need gc(): run again with it exposed.
  const self = fileURLToPath(import.meta.url);
  const child = spawnSync(process.execPath, ["--expose-gc", self], { stdio: "inherit" });
  process.exit(child.status ?? 1);
}

// ---- inputs -------------------------------------------------------------------------------------------------

const REPORT = create(OrcaLoadReportSchema, {
  cpuUtilization: 0.62,
  memUtilization: 0.41,
  applicationUtilization: 0.55,
  namedMetrics: { queue_depth: 7, cache_hit_ratio: 0.93 },
});
const BYTES = Buffer.from(toBinary(OrcaLoadReportSchema, REPORT));
const BASE64 = BYTES.toString("base64").replace(/=+$/, "");

// grpc-js decodes the trailer with a proto-loader deserializer for xds.data.orca.v3.OrcaLoadReport, loaded from
// its own proto files with these options (build/src/orca.js).
const require = createRequire(import.meta.url);
const grpcJsDir = dirname(require.resolve("@grpc/grpc-js/package.json"));
const grpc = require("@grpc/grpc-js") as typeof import("@grpc/grpc-js");
const protoLoader = require(
  require.resolve("@grpc/proto-loader", { paths: [grpcJsDir] }),
) as typeof import("@grpc/proto-loader");
const loaded = grpc.loadPackageDefinition(
  protoLoader.loadSync("xds/service/orca/v3/orca.proto", {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
    includeDirs: [join(grpcJsDir, "proto/xds"), join(grpcJsDir, "proto/protoc-gen-validate")],
  }),
) as unknown as { xds: { data: { orca: { v3: { OrcaLoadReport: { deserialize(b: Buffer): unknown } } } } } };
const grpcJsDeserialize = loaded.xds.data.orca.v3.OrcaLoadReport.deserialize;

// ---- 1. parse -----------------------------------------------------------------------------------------------

// The machine is shared: each decoder is measured in turn, round after round, and the median round counts.
const decoders: Record<string, () => unknown> = {
  "xdskit, base64 text": () => decodeOrcaBinaryTrailer(BASE64),
  "xdskit, bytes": () => decodeOrcaLoadReport(BYTES),
  "grpc-js, bytes": () => grpcJsDeserialize(BYTES),
  "grpc-js, base64 text": () => grpcJsDeserialize(Buffer.from(BASE64, "base64")),
};
const rounds: Record<string, number[]> = Object.fromEntries(Object.keys(decoders).map((name) => [name, []]));
for (let round = 0; round < 7; round++) {
  for (const [name, decode] of Object.entries(decoders)) {
    rounds[name]!.push(opsPerSecond(() => consume(decode()), { sampleMs: 100, samples: 3 }));
  }
}
const parse = Object.fromEntries(Object.entries(rounds).map(([name, rates]) => [name, median(rates)]));
const grpcJsBytes = parse["grpc-js, bytes"]!;
const grpcJsText = parse["grpc-js, base64 text"]!;
printTable(
  `Parse one endpoint-load-metrics-bin trailer (${BYTES.length} bytes: cpu, mem, application, 2 named metrics)`,
  ["decoder", "parses/s", "ns/parse", "vs grpc-js, same input"],
  Object.entries(parse).map(([name, rate]) => [
    name,
    int(rate),
    (1e9 / rate).toFixed(0),
    ratio(rate / (name.endsWith("bytes") ? grpcJsBytes : grpcJsText)),
  ]),
);

// ---- 2. record ----------------------------------------------------------------------------------------------

const SERVER = { serverUri: "lrs.bench:443" };
const ALL = { sendAllClusters: true, clusters: new Set<string>() };
const EVERYTHING = parseLrsReportEndpointMetrics([
  "cpu_utilization",
  "mem_utilization",
  "application_utilization",
  "named_metrics.*",
]);

let gcCount = 0;
const observer = new PerformanceObserver((list) => {
  gcCount += list.getEntries().length;
});
observer.observe({ entryTypes: ["gc"] });

/** Heap bytes per call over `calls` calls of `record`, after gc(); and the GCs seen meanwhile. */
async function allocation(record: () => void, calls: number): Promise<{ bytesPerCall: number; gcs: number }> {
  gc();
  await new Promise((resolve) => setImmediate(resolve)); // let the observer report that gc
  const gcsBefore = gcCount;
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < calls; i++) record();
  const after = process.memoryUsage().heapUsed;
  await new Promise((resolve) => setImmediate(resolve));
  return { bytesPerCall: (after - before) / calls, gcs: gcCount - gcsBefore };
}

// Recorded: the report as our decoder hands it over (what an interceptor passes on).
const PARSED = decodeOrcaBinaryTrailer(BASE64);
const recordRows: string[][] = [];
for (const [name, propagation] of [
  ["A85: cpu, mem, application, named_metrics.*", EVERYTHING],
  ["A85: named_metrics.queue_depth only", parseLrsReportEndpointMetrics(["named_metrics.queue_depth"])],
  ["A64 (switch off)", { mode: "a64" as const }],
] as const) {
  const store = createLoadStore({ env: {} });
  const stats = store.localityStats({ server: SERVER, clusterName: "bench", locality: { zone: "a" }, propagation });
  const record = () => {
    stats.callStarted();
    stats.callFinished("ok", PARSED);
  };
  const rate = opsPerSecond(record);
  const heap = await allocation(record, 2_000_000);
  store.takeReport(SERVER, ALL);
  recordRows.push([name, int(rate), (1e9 / rate).toFixed(1), heap.bytesPerCall.toFixed(3), String(heap.gcs)]);
}
{
  // For reference: the same measurement of a loop that does nothing but count.
  let counter = 0;
  const heap = await allocation(() => {
    counter++;
  }, 2_000_000);
  recordRows.push(["(an empty loop, for reference)", "", "", heap.bytesPerCall.toFixed(3), String(heap.gcs)]);
  consume(counter > 0);
}
printTable(
  "Record one call (callStarted + callFinished with the 5-metric report), warm handle",
  ["propagation", "calls/s", "ns/call", "heap bytes/call (2M calls)", "GCs during those"],
  recordRows,
);

// ---- 3. one million calls, 100 localities, one report ------------------------------------------------------

{
  const store = createLoadStore({ env: {} });
  const handles = Array.from({ length: 100 }, (_, i) =>
    store.localityStats({
      server: SERVER,
      clusterName: "bench",
      edsServiceName: "bench-eds",
      locality: { region: "r", zone: `z${i}` },
      propagation: EVERYTHING,
    }),
  );
  const start = performance.now();
  for (let i = 0; i < 1_000_000; i++) {
    const stats = handles[i % 100]!;
    stats.callStarted();
    stats.callFinished(i % 50 === 0 ? "error" : "ok", PARSED);
  }
  const recorded = performance.now();
  const report = store.takeReport(SERVER, ALL);
  const built = performance.now();
  const bytes = toBinary(LoadStatsRequestSchema, create(LoadStatsRequestSchema, { clusterStats: report.clusterStats }));
  const encoded = performance.now();
  const localities = report.clusterStats[0]?.upstreamLocalityStats ?? [];
  const issued = localities.reduce((n, l) => n + l.totalIssuedRequests, 0n);
  printTable(
    "One million calls across 100 localities into one LRS report",
    ["step", "ms", "detail"],
    [
      [
        "record 1,000,000 calls",
        (recorded - start).toFixed(1),
        `${((((recorded - start) * 1e3) / 1e6) * 1e3).toFixed(0)} ns/call`,
      ],
      [
        "build the report (takeReport)",
        (built - recorded).toFixed(2),
        `${localities.length} localities, ${issued} calls`,
      ],
      ["encode the LoadStatsRequest", (encoded - built).toFixed(2), `${bytes.length} bytes`],
    ],
  );
}
observer.disconnect();
