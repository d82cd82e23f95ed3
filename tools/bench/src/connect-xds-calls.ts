// @xdskit/connect-xds over real HTTP/2 on 127.0.0.1, beside the same calls without xDS and beside
// @grpc/grpc-js-xds, in one run. Backends run in child processes (connect-node), so the CPU measured is the
// client's; the control plane runs here and is idle while calls are measured. Steps:
//  1. Per-call overhead: 1,000 unary calls at concurrency 1 and at 100, through createXdsTransport and through a
//     plain connect-node createGrpcTransport to the same backend: p50 latency and CPU per call (process.cpuUsage),
//     rounds alternating, medians compared.
//  2. Calls per second: 10,000 unary calls at concurrency 100 through createXdsTransport and through grpc-js with
//     @grpc/grpc-js-xds (same control plane, same backend), rounds alternating.
//  3. From a changed EDS response (the cluster's only endpoint replaced by another backend) to the first call
//     answered by the new endpoint, calls running at concurrency 10, for both xDS clients.
// `--quick` makes fewer rounds. Not a test: it prints figures and ratios, and gates nothing.
import { type ChildProcess, fork } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as grpcJsXds from "@grpc/grpc-js-xds";
import { createXdsTransport } from "@xdskit/connect-xds";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  createManagementServer,
} from "@xdskit/control-plane";
import { createXdsClient } from "@xdskit/xds-client";
import { deserializeText, ECHO_PATH, EchoService, serializeText } from "./lib/echo-service.js";
import { median } from "./lib/measure.js";
import { int, printTable, ratio } from "./lib/table.js";

const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 3 : 7;
const worker = join(dirname(fileURLToPath(import.meta.url)), "workers", "echo-backend-worker.js");

/** One call: resolves with the answering backend's name. */
type Call = () => Promise<string>;

interface Backend {
  readonly address: string;
  readonly child: ChildProcess;
}

function startBackend(name: string): Promise<Backend> {
  const child = fork(worker, [name], { stdio: "inherit" });
  return new Promise((resolve, reject) => {
    child.once("message", (message: { port: number }) => resolve({ address: `127.0.0.1:${message.port}`, child }));
    child.once("error", reject);
  });
}

/** Runs `total` calls with `concurrency` in flight; latencies in ms and CPU microseconds for the whole run. */
async function run(call: Call, total: number, concurrency: number) {
  const latencies = new Float64Array(total);
  let next = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t = performance.now();
        await call();
        latencies[i] = performance.now() - t;
      }
    }),
  );
  const elapsedMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  latencies.sort();
  return {
    p50: latencies[Math.floor(total / 2)]!,
    cpuPerCallUs: (used.user + used.system) / total,
    callsPerSecond: (total / elapsedMs) * 1000,
  };
}

const server = await createManagementServer({ lrsPolicy: { intervalMs: 60_000 } });
const [a, b] = await Promise.all([startBackend("a"), startBackend("b")]);
const assignment = (address: string) =>
  buildClusterLoadAssignment({ clusterName: "bench-cluster", localities: [{ zone: "z", endpoints: [address] }] });
server.setSnapshot([
  buildListener({ name: "bench", routeConfigName: "bench-route" }),
  buildRouteConfiguration({ name: "bench-route", cluster: "bench-cluster" }),
  buildCluster({ name: "bench-cluster" }),
  assignment(a.address),
]);
const bootstrap = {
  xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }] }],
  node: { id: "bench-client", cluster: "bench", locality: { region: "r", zone: "z" } },
};

// Our transport, a plain connect-node transport to backend a, and grpc-js with grpc-js-xds.
const xdsClient = createXdsClient({ bootstrap });
const xdsTransport = createXdsTransport({ target: "xds:///bench", client: xdsClient });
const plainTransport = createGrpcTransport({ baseUrl: `http://${a.address}` });
const request = create(StringValueSchema, { value: "x" });
const viaXds = createClient(EchoService, xdsTransport) as unknown as { unary(r: object): Promise<{ value: string }> };
const viaPlain = createClient(EchoService, plainTransport) as unknown as {
  unary(r: object): Promise<{ value: string }>;
};
const connectXds: Call = () => viaXds.unary(request).then((r) => r.value.slice(0, r.value.indexOf(":")));
const plain: Call = () => viaPlain.unary(request).then((r) => r.value.slice(0, r.value.indexOf(":")));
grpcJsXds.register();
const grpcClient = new grpc.Client("xds:///bench", grpc.credentials.createInsecure(), {
  "grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config": JSON.stringify(bootstrap),
});
const grpcJs: Call = () =>
  new Promise((resolve, reject) =>
    grpcClient.makeUnaryRequest(ECHO_PATH, serializeText, deserializeText, "x", new grpc.Metadata(), {}, (error, r) =>
      error ? reject(error) : resolve(r!.value.slice(0, r!.value.indexOf(":"))),
    ),
  );

// Warm-up: every client connected and its code optimised.
for (const call of [connectXds, plain, grpcJs]) await run(call, 2_000, 20);

// 1. Per-call overhead against plain connect-node.
const overheadRows: string[][] = [];
for (const concurrency of [1, 100]) {
  const ours = { p50: [] as number[], cpu: [] as number[] };
  const base = { p50: [] as number[], cpu: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    const x = await run(connectXds, 1_000, concurrency);
    const p = await run(plain, 1_000, concurrency);
    ours.p50.push(x.p50);
    ours.cpu.push(x.cpuPerCallUs);
    base.p50.push(p.p50);
    base.cpu.push(p.cpuPerCallUs);
  }
  overheadRows.push([
    `concurrency ${concurrency}`,
    `${median(ours.p50).toFixed(3)} ms`,
    `${median(base.p50).toFixed(3)} ms`,
    ratio(median(ours.p50) / median(base.p50)),
    `${median(ours.cpu).toFixed(1)} us`,
    `${median(base.cpu).toFixed(1)} us`,
    ratio(median(ours.cpu) / median(base.cpu)),
  ]);
}
printTable(
  `1,000 unary calls, one backend: createXdsTransport against plain createGrpcTransport (median of ${ROUNDS} rounds; goals: p50 <= 1.1x, CPU/call <= 1.15x)`,
  ["", "p50 xds", "p50 plain", "p50 ratio", "CPU/call xds", "CPU/call plain", "CPU ratio"],
  overheadRows,
);

// 2. Calls per second against grpc-js-xds.
const rates = { ours: [] as number[], peer: [] as number[], plain: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  rates.ours.push((await run(connectXds, 10_000, 100)).callsPerSecond);
  rates.peer.push((await run(grpcJs, 10_000, 100)).callsPerSecond);
  rates.plain.push((await run(plain, 10_000, 100)).callsPerSecond);
}
printTable(
  `10,000 unary calls at concurrency 100 through the same control plane and backend (median of ${ROUNDS} rounds; goal >= 1.5x)`,
  ["client", "calls/s", "ratio"],
  [
    ["@xdskit/connect-xds", int(median(rates.ours)), ratio(median(rates.ours) / median(rates.peer))],
    ["@grpc/grpc-js-xds + grpc-js", int(median(rates.peer)), "1.00x"],
    ["(plain connect-node, no xDS)", int(median(rates.plain)), ratio(median(rates.plain) / median(rates.peer))],
  ],
);

// 3. EDS change to the first call on the new endpoint: each round replaces the endpoint with a backend started for
// that round, so every client has to open a new connection (none is pooled from an earlier round).
const extra: Backend[] = [];
async function switchTime(call: Call, round: number): Promise<number> {
  const to = await startBackend(`n${round}`);
  extra.push(to);
  const target = `n${round}`;
  let reachedAt = 0;
  const started = performance.now();
  server.setResource(assignment(to.address));
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (reachedAt === 0) {
        const by = await call().catch(() => "");
        if (by === target && reachedAt === 0) reachedAt = performance.now();
      }
    }),
  );
  return reachedAt - started;
}
const switches = { ours: [] as number[], peer: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  switches.ours.push(await switchTime(connectXds, 2 * round));
  switches.peer.push(await switchTime(grpcJs, 2 * round + 1));
}
printTable(
  `From a changed EDS response (the only endpoint replaced by a new backend) to the first call answered by it (median of ${ROUNDS})`,
  ["client", "time", "ratio (peer / ours)"],
  [
    [
      "@xdskit/connect-xds",
      `${median(switches.ours).toFixed(1)} ms`,
      ratio(median(switches.peer) / median(switches.ours)),
    ],
    ["@grpc/grpc-js-xds + grpc-js", `${median(switches.peer).toFixed(1)} ms`, "1.00x"],
  ],
);
for (const backend of extra) backend.child.kill();

await xdsTransport.close();
await xdsClient.close();
grpcClient.close();
await server.close();
a.child.kill();
b.child.kill();
process.exit(0);
