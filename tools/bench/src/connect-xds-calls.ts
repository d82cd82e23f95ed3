// @xdskit/connect-xds over real HTTP/2 on 127.0.0.1, beside the same calls without xDS and beside
// @grpc/grpc-js-xds, in one run. Backends run in child processes, so the CPU measured is the client's; the control
// plane runs here and is idle while calls are measured. Two kinds of backend answer the same echo method: connect-node
// (connectNodeAdapter) and a minimal node:http2 one (workers/echo-backend-worker.ts), which costs less CPU per call
// than any of the clients, so that calls per second compare the clients and not the backend. Steps:
//  1. Per-call overhead: 1,000 unary calls at concurrency 1 and at 100, through createXdsTransport and through a
//     plain connect-node createGrpcTransport to the same backend: p50 latency and CPU per call (process.cpuUsage),
//     rounds alternating, medians compared; once per backend kind.
//  2. Calls per second: 10,000 unary calls at concurrency 100 through createXdsTransport and through grpc-js with
//     @grpc/grpc-js-xds (same control plane, same backend), rounds alternating; once per backend kind, with the CPU
//     per call of this process (the client) and of the backend's: on a busy machine both share the cores, so the
//     sum decides the rate, and with connect-node's adapter the backend's part is most of it. Against the minimal
//     backend also createXdsTransport with unary calls on connect's own gRPC transport (the call path before the
//     lean unary call, an internal switch).
//  3. From a changed EDS response (the cluster's only endpoint replaced by another backend) to the first call
//     answered by the new endpoint, calls running at concurrency 10, for both xDS clients. Each round's new backend
//     is a new process, warmed first by 300 calls from a plain connect-node client (closed before the switch): its
//     first calls would otherwise compile connect-node's server code, 50-70 ms that both clients wait for.
// `--quick` makes fewer rounds. Not a test: it prints figures and ratios, and gates nothing.
import { create } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as grpcJsXds from "@grpc/grpc-js-xds";
import { createXdsTransport } from "@xdskit/connect-xds";
import { createXdsTransportWithInternals } from "@xdskit/connect-xds/internal";
import { buildClusterLoadAssignment, createManagementServer } from "@xdskit/control-plane";
import { createXdsClient } from "@xdskit/xds-client";
import { benchBootstrap, type EchoBackend, echoResources, startEchoBackend } from "./lib/echo-backends.js";
import { deserializeText, ECHO_PATH, EchoService, serializeText } from "./lib/echo-service.js";
import { median } from "./lib/measure.js";
import { int, printTable, ratio } from "./lib/table.js";

const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 3 : 7;

/** One call: resolves with the answering backend's name. */
type Call = () => Promise<string>;

/** Runs `total` calls with `concurrency` in flight; latencies in ms and CPU microseconds for the whole run. */
async function run(call: Call, total: number, concurrency: number, backend?: EchoBackend) {
  const latencies = new Float64Array(total);
  let next = 0;
  const backendCpu = await backend?.cpuUs();
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
  const backendUs = backend === undefined ? 0 : (await backend.cpuUs()) - (backendCpu ?? 0);
  latencies.sort();
  return {
    p50: latencies[Math.floor(total / 2)]!,
    cpuPerCallUs: (used.user + used.system) / total,
    backendCpuPerCallUs: backendUs / total,
    callsPerSecond: (total / elapsedMs) * 1000,
  };
}

const server = await createManagementServer({ lrsPolicy: { intervalMs: 60_000 } });
const [a, h] = await Promise.all([startEchoBackend("a"), startEchoBackend("h", "h2")]);
const assignment = (address: string, cluster = "bench-cluster") =>
  buildClusterLoadAssignment({ clusterName: cluster, localities: [{ zone: "z", endpoints: [address] }] });
server.setSnapshot([
  ...echoResources("bench", "bench-cluster", [a.address]),
  ...echoResources("bench-h2", "bench-h2-cluster", [h.address]),
]);
const bootstrap = benchBootstrap(server.address);

type Echo = { unary(r: object): Promise<{ value: string }> };
const request = create(StringValueSchema, { value: "x" });
const by = (r: { value: string }) => r.value.slice(0, r.value.indexOf(":"));
const callOf = (transport: Transport): Call => {
  const client = createClient(EchoService, transport) as unknown as Echo;
  return () => client.unary(request).then(by);
};
grpcJsXds.register();
const grpcOf = (target: string): { call: Call; close(): void } => {
  const client = new grpc.Client(target, grpc.credentials.createInsecure(), {
    "grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config": JSON.stringify(bootstrap),
  });
  const call: Call = () =>
    new Promise((resolve, reject) =>
      client.makeUnaryRequest(ECHO_PATH, serializeText, deserializeText, "x", new grpc.Metadata(), {}, (error, r) =>
        error ? reject(error) : resolve(by(r!)),
      ),
    );
  return { call, close: () => client.close() };
};

// Per backend kind: our transport, a plain connect-node transport to the backend, grpc-js with grpc-js-xds.
const xdsClient = createXdsClient({ bootstrap });
const xdsTransports = [
  createXdsTransport({ target: "xds:///bench", client: xdsClient }),
  createXdsTransport({ target: "xds:///bench-h2", client: xdsClient }),
];
const connectPathTransport = createXdsTransportWithInternals(
  { target: "xds:///bench-h2", client: xdsClient },
  { unaryCalls: "connect" },
);
const grpcClients = [grpcOf("xds:///bench"), grpcOf("xds:///bench-h2")];
const kinds = [
  {
    label: "connect-node backend",
    goal: 1.2,
    backend: a,
    connectXds: callOf(xdsTransports[0]!),
    plain: callOf(createGrpcTransport({ baseUrl: `http://${a.address}` })),
    grpcJs: grpcClients[0]!.call,
  },
  {
    label: "minimal node:http2 backend",
    goal: 1.5,
    backend: h,
    connectXds: callOf(xdsTransports[1]!),
    plain: callOf(createGrpcTransport({ baseUrl: `http://${h.address}` })),
    grpcJs: grpcClients[1]!.call,
  },
];
const connectPath = callOf(connectPathTransport);

// Warm-up: every client connected and its code optimised.
for (const kind of kinds) for (const call of [kind.connectXds, kind.plain, kind.grpcJs]) await run(call, 2_000, 20);
await run(connectPath, 2_000, 20);

// 1. Per-call overhead against plain connect-node.
for (const kind of kinds) {
  const overheadRows: string[][] = [];
  for (const concurrency of [1, 100]) {
    const ours = { p50: [] as number[], cpu: [] as number[] };
    const base = { p50: [] as number[], cpu: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      const x = await run(kind.connectXds, 1_000, concurrency);
      const p = await run(kind.plain, 1_000, concurrency);
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
    `1,000 unary calls, one ${kind.label}: createXdsTransport against plain createGrpcTransport (median of ${ROUNDS} rounds; goals: p50 <= 1.1x, CPU/call <= 1.15x)`,
    ["", "p50 xds", "p50 plain", "p50 ratio", "CPU/call xds", "CPU/call plain", "CPU ratio"],
    overheadRows,
  );
}

// 2. Calls per second against grpc-js-xds, with the CPU per call here (the client) and in the backend's process.
for (const kind of kinds) {
  const withConnectPath = kind === kinds[1];
  type Round = Awaited<ReturnType<typeof run>>;
  const rounds = { ours: [] as Round[], peer: [] as Round[], plain: [] as Round[], connectPath: [] as Round[] };
  for (let round = 0; round < ROUNDS; round++) {
    rounds.ours.push(await run(kind.connectXds, 10_000, 100, kind.backend));
    rounds.peer.push(await run(kind.grpcJs, 10_000, 100, kind.backend));
    rounds.plain.push(await run(kind.plain, 10_000, 100, kind.backend));
    if (withConnectPath) rounds.connectPath.push(await run(connectPath, 10_000, 100, kind.backend));
  }
  const med = (list: Round[], key: keyof Round) => median(list.map((r) => r[key]));
  const cpuBoth = (list: Round[]) => med(list, "cpuPerCallUs") + med(list, "backendCpuPerCallUs");
  const row = (label: string, list: Round[]) => [
    label,
    int(med(list, "callsPerSecond")),
    `${int(Math.min(...list.map((r) => r.callsPerSecond)))}-${int(Math.max(...list.map((r) => r.callsPerSecond)))}`,
    ratio(med(list, "callsPerSecond") / med(rounds.peer, "callsPerSecond")),
    `${med(list, "cpuPerCallUs").toFixed(1)} us`,
    `${med(list, "backendCpuPerCallUs").toFixed(1)} us`,
    ratio(cpuBoth(list) / cpuBoth(rounds.peer)),
  ];
  printTable(
    `10,000 unary calls at concurrency 100, ${kind.label}, same control plane (median of ${ROUNDS} rounds; goal >= ${kind.goal}x)`,
    ["client", "calls/s", "range", "ratio", "CPU/call", "backend CPU/call", "CPU ratio (both)"],
    [
      row("@xdskit/connect-xds", rounds.ours),
      ...(withConnectPath ? [row("(connect-xds, unary calls on connect's gRPC transport)", rounds.connectPath)] : []),
      row("@grpc/grpc-js-xds + grpc-js", rounds.peer),
      row("(plain connect-node, no xDS)", rounds.plain),
    ],
  );
}

// 3. EDS change to the first call on the new endpoint: each round replaces the endpoint with a backend started for
// that round, so every client has to open a new connection (none is pooled from an earlier round), and warmed by a
// plain connect-node client first, so its first calls do not compile connect-node's server code while the clients
// wait.
const extra: EchoBackend[] = [];
async function switchTime(call: Call, round: number): Promise<number> {
  const to = await startEchoBackend(`n${round}`);
  extra.push(to);
  const warm = callOf(createGrpcTransport({ baseUrl: `http://${to.address}` }));
  await run(warm, 300, 10);
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
  switches.ours.push(await switchTime(kinds[0]!.connectXds, 2 * round));
  switches.peer.push(await switchTime(kinds[0]!.grpcJs, 2 * round + 1));
}
const range = (values: number[]) => `${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)} ms`;
printTable(
  `From a changed EDS response (the only endpoint replaced by a new, warmed backend) to the first call answered by it (median of ${ROUNDS}; goal <= 0.5x)`,
  ["client", "time", "range", "ratio"],
  [
    [
      "@xdskit/connect-xds",
      `${median(switches.ours).toFixed(1)} ms`,
      range(switches.ours),
      ratio(median(switches.ours) / median(switches.peer)),
    ],
    ["@grpc/grpc-js-xds + grpc-js", `${median(switches.peer).toFixed(1)} ms`, range(switches.peer), "1.00x"],
  ],
);
for (const backend of extra) backend.child.kill();

for (const transport of [...xdsTransports, connectPathTransport]) await transport.close();
await xdsClient.close();
for (const client of grpcClients) client.close();
await server.close();
a.child.kill();
h.child.kill();
process.exit(0);
