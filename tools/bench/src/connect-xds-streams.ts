// Server-streaming throughput of @xdskit/connect-xds beside @grpc/grpc-js-xds, over real HTTP/2 on 127.0.0.1, same
// control plane, same backend, in one run. A round is 20 server streams of 1,000 messages of 100 bytes each (`--quick`:
// 200 messages), 10 streams in flight; rounds alternate between the clients. Per client: messages per second, and
// the CPU per message of this process (the client) and of the backend's process (the backends are child processes;
// on a busy machine both share the cores, so their sum decides the rate). Once with connect-node's adapter as the
// backend, once with the minimal node:http2 one, which costs less than either client (workers/echo-backend-worker.ts).
// Not a test: it prints figures and ratios, and gates nothing.
import { create } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import * as grpcJsXds from "@grpc/grpc-js-xds";
import { createXdsTransport } from "@xdskit/connect-xds";
import { createManagementServer } from "@xdskit/control-plane";
import { createXdsClient } from "@xdskit/xds-client";
import { benchBootstrap, type EchoBackend, echoResources, startEchoBackend } from "./lib/echo-backends.js";
import { deserializeText, EchoService, STREAM_PATH, serializeText } from "./lib/echo-service.js";
import { median } from "./lib/measure.js";
import { int, printTable, ratio } from "./lib/table.js";

const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 3 : 7;
const STREAMS = 20;
const MESSAGES = quick ? 200 : 1_000;
const SIZE = 100;
const IN_FLIGHT = 10;

/** One server stream: resolves with the number of messages it read. */
type Stream = () => Promise<number>;

const server = await createManagementServer({ lrsPolicy: { intervalMs: 60_000 } });
const backends: Record<"connect" | "h2", EchoBackend> = {
  connect: await startEchoBackend("a", "connect"),
  h2: await startEchoBackend("h", "h2"),
};
server.setSnapshot([
  ...echoResources("bench", "bench-cluster", [backends.connect.address]),
  ...echoResources("bench-h2", "bench-h2-cluster", [backends.h2.address]),
]);
const bootstrap = benchBootstrap(server.address);
const request = create(StringValueSchema, { value: `${MESSAGES}:${SIZE}` });

const xdsClient = createXdsClient({ bootstrap });
const transports = [
  createXdsTransport({ target: "xds:///bench", client: xdsClient }),
  createXdsTransport({ target: "xds:///bench-h2", client: xdsClient }),
];
const oursOf = (index: number): Stream => {
  const echo = createClient(EchoService, transports[index]!) as unknown as {
    serverStream(request: object): AsyncIterable<{ value: string }>;
  };
  return async () => {
    let n = 0;
    for await (const message of echo.serverStream(request)) if (message.value.length === SIZE) n++;
    return n;
  };
};

grpcJsXds.register();
const grpcClients = ["xds:///bench", "xds:///bench-h2"].map(
  (target) =>
    new grpc.Client(target, grpc.credentials.createInsecure(), {
      "grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config": JSON.stringify(bootstrap),
    }),
);
const peerOf =
  (index: number): Stream =>
  () =>
    new Promise((resolve, reject) => {
      let n = 0;
      const call = grpcClients[index]!.makeServerStreamRequest(
        STREAM_PATH,
        serializeText,
        deserializeText,
        `${MESSAGES}:${SIZE}`,
        new grpc.Metadata(),
        {},
      );
      call.on("data", (message: { value: string }) => {
        if (message.value.length === SIZE) n++;
      });
      call.on("error", reject);
      call.on("end", () => resolve(n));
    });

/** `count` streams, `IN_FLIGHT` at a time: messages per second and CPU microseconds per message, here and there. */
async function run(stream: Stream, backend: EchoBackend, count = STREAMS) {
  let next = 0;
  let messages = 0;
  const cpu = process.cpuUsage();
  const backendCpu = await backend.cpuUs();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (let i = next++; i < count; i = next++) {
        const read = await stream();
        messages += read;
      }
    }),
  );
  const elapsedMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  const backendUs = (await backend.cpuUs()) - backendCpu;
  if (messages !== count * MESSAGES) throw new Error(`read ${messages} messages of ${count * MESSAGES}`);
  return {
    perSecond: (messages / elapsedMs) * 1000,
    clientUs: (used.user + used.system) / messages,
    backendUs: backendUs / messages,
  };
}

const kinds = [
  { label: "connect-node backend", backend: backends.connect, ours: oursOf(0), peer: peerOf(0) },
  { label: "minimal node:http2 backend", backend: backends.h2, ours: oursOf(1), peer: peerOf(1) },
];
// Warm-up: both clients connected and their code optimised.
for (const kind of kinds) for (const stream of [kind.ours, kind.peer]) await run(stream, kind.backend, 20);

for (const kind of kinds) {
  const rounds: Record<"ours" | "peer", Awaited<ReturnType<typeof run>>[]> = { ours: [], peer: [] };
  for (let round = 0; round < ROUNDS; round++) {
    rounds.ours.push(await run(kind.ours, kind.backend));
    rounds.peer.push(await run(kind.peer, kind.backend));
  }
  const med = (side: "ours" | "peer", key: "perSecond" | "clientUs" | "backendUs") =>
    median(rounds[side].map((r) => r[key]));
  const row = (label: string, side: "ours" | "peer") => [
    label,
    int(med(side, "perSecond")),
    `${int(Math.min(...rounds[side].map((r) => r.perSecond)))}-${int(Math.max(...rounds[side].map((r) => r.perSecond)))}`,
    ratio(med(side, "perSecond") / med("peer", "perSecond")),
    `${med(side, "clientUs").toFixed(2)} us`,
    `${med(side, "backendUs").toFixed(2)} us`,
    ratio((med(side, "clientUs") + med(side, "backendUs")) / (med("peer", "clientUs") + med("peer", "backendUs"))),
  ];
  printTable(
    `${STREAMS} server streams of ${int(MESSAGES)} messages of ${SIZE} bytes, ${IN_FLIGHT} in flight, ${kind.label}, same control plane (median of ${ROUNDS} rounds; goal >= 1.2x)`,
    ["client", "messages/s", "range", "ratio", "CPU/message", "backend CPU/message", "CPU ratio (both)"],
    [row("@xdskit/connect-xds", "ours"), row("@grpc/grpc-js-xds + grpc-js", "peer")],
  );
}

for (const transport of transports) await transport.close();
await xdsClient.close();
for (const client of grpcClients) client.close();
await server.close();
for (const backend of Object.values(backends)) backend.child.kill();
process.exit(0);
