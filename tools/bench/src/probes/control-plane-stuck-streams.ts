// What clients that never read cost the control plane: N SotW streams subscribe to CDS (wildcard) and then stop
// reading (HTTP/2 flow control stalls their responses), the clusters change K times, and the server's RSS and heap
// are printed after each phase. Not a benchmark with a peer: a probe for the per-stream queue bound.
//
// Steps: (1) the server starts in this process with C clusters (about 23 KB of CDS); (2) a child process opens N
// streams over N/100 HTTP/2 connections, sends one wildcard CDS request on each, and never reads; (3) K updates,
// each changing one cluster, 100 ms apart; (4) memory is printed after a forced GC, and the streams are closed.
//
//   node --expose-gc tools/bench/dist/probes/control-plane-stuck-streams.js [streams=3000] [updates=10] [clusters=400]
import { fork } from "node:child_process";
import * as http2 from "node:http2";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { buildCluster, CDS_TYPE_URL, createManagementServer } from "@xdskit/control-plane";
import { DiscoveryRequestSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";

const ADS_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";
const STREAMS_PER_CONNECTION = 100;

function grpcFrame(message: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}

async function runClients(url: string, streams: number): Promise<void> {
  const request = grpcFrame(
    toBinary(DiscoveryRequestSchema, create(DiscoveryRequestSchema, { node: { id: "stuck" }, typeUrl: CDS_TYPE_URL })),
  );
  const sessions: http2.ClientHttp2Session[] = [];
  let opened = 0;
  let responded = 0;
  await new Promise<void>((resolve) => {
    while (opened < streams) {
      const session = http2.connect(url);
      session.on("error", () => {});
      sessions.push(session);
      for (let i = 0; i < STREAMS_PER_CONNECTION && opened < streams; i++, opened++) {
        const stream = session.request({
          ":method": "POST",
          ":path": ADS_PATH,
          "content-type": "application/grpc",
          te: "trailers",
        });
        stream.on("error", () => {});
        // Never read: the stream stays paused, so HTTP/2 flow control stops the server once the window is full.
        stream.once("response", () => {
          if (++responded === streams) resolve();
        });
        stream.write(request);
      }
    }
  });
  process.send?.({ type: "stuck" });
  process.on("message", () => {
    for (const session of sessions) session.destroy();
    process.exit(0);
  });
}

function memory(): { rssMb: number; heapMb: number } {
  globalThis.gc?.();
  const usage = process.memoryUsage();
  return { rssMb: Math.round(usage.rss / 2 ** 20), heapMb: Math.round(usage.heapUsed / 2 ** 20) };
}

async function main(): Promise<void> {
  const [streams = 3000, updates = 10, clusters = 400] = process.argv.slice(2).map(Number);
  const server = await createManagementServer({ historyLimit: 0 });
  const names = Array.from({ length: clusters }, (_, i) => `stuck-probe-cluster-${String(i).padStart(5, "0")}`);
  server.setSnapshot(names.map((name) => buildCluster({ name, edsServiceName: `${name}-v0` })));
  const rows: [string, { rssMb: number; heapMb: number }][] = [["server started", memory()]];
  const child = fork(fileURLToPath(import.meta.url), ["--clients", server.url, String(streams)]);
  await new Promise<void>((resolve) => child.once("message", () => resolve()));
  rows.push([`${streams} streams stuck`, memory()]);
  for (let u = 1; u <= updates; u++) {
    server.setResource(buildCluster({ name: names[0] as string, edsServiceName: `v${u}` }));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  rows.push([`after ${updates} updates`, memory()]);
  process.stdout.write(
    `control plane, ${streams} streams that never read, ${updates} updates of ${clusters} clusters (node ${process.version})\n`,
  );
  for (const [label, m] of rows) process.stdout.write(`${label.padEnd(24)} rss ${m.rssMb} MB  heap ${m.heapMb} MB\n`);
  child.send("exit");
  await server.close();
}

const clientsArg = process.argv.indexOf("--clients");
if (clientsArg > 0) await runClients(process.argv[clientsArg + 1] as string, Number(process.argv[clientsArg + 2]));
else await main();
