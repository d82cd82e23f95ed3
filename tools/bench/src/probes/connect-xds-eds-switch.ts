// Where the time goes between a changed EDS response and the first call the new backend answers, for
// @xdskit/connect-xds and @grpc/grpc-js-xds (rounds alternating, one process, same control plane). Each round starts
// a backend process (connect-node), warms it with 300 calls from a plain connect-node client unless `--cold`, then
// replaces the cluster's only endpoint with it while 10 callers keep calling. Printed per round, in ms from the EDS
// change: when our xds-client had the new assignment (its own watch: both clients get the same response), when the
// backend accepted the connection, got the first request, ran the handler and finished the response, and when the
// first call it answered returned. `node dist/probes/connect-xds-eds-switch.js [--cold] [rounds=8]`.
import { create } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as grpcJsXds from "@grpc/grpc-js-xds";
import { createXdsTransport } from "@xdskit/connect-xds";
import { buildClusterLoadAssignment, createManagementServer } from "@xdskit/control-plane";
import { createXdsClient, endpointResourceType } from "@xdskit/xds-client";
import { benchBootstrap, type EchoBackend, echoResources, startEchoBackend } from "../lib/echo-backends.js";
import { deserializeText, ECHO_PATH, EchoService, serializeText } from "../lib/echo-service.js";
import { median } from "../lib/measure.js";

const cold = process.argv.includes("--cold");
const rounds = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 8);

type Call = () => Promise<string>;
const by = (r: { value: string }) => r.value.slice(0, r.value.indexOf(":"));
const request = create(StringValueSchema, { value: "x" });
const callOf = (transport: Transport): Call => {
  const client = createClient(EchoService, transport) as unknown as { unary(r: object): Promise<{ value: string }> };
  return () => client.unary(request).then(by);
};

const server = await createManagementServer({ lrsPolicy: { intervalMs: 60_000 } });
const first = await startEchoBackend("first");
const assignment = (address: string) =>
  buildClusterLoadAssignment({ clusterName: "switch-cluster", localities: [{ zone: "z", endpoints: [address] }] });
server.setSnapshot(echoResources("switch", "switch-cluster", [first.address]));
const bootstrap = benchBootstrap(server.address);
const xdsClient = createXdsClient({ bootstrap });
const transport = createXdsTransport({ target: "xds:///switch", client: xdsClient });
const ours = callOf(transport);
grpcJsXds.register();
const grpcClient = new grpc.Client("xds:///switch", grpc.credentials.createInsecure(), {
  "grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config": JSON.stringify(bootstrap),
});
const peer: Call = () =>
  new Promise((resolve, reject) =>
    grpcClient.makeUnaryRequest(ECHO_PATH, serializeText, deserializeText, "x", new grpc.Metadata(), {}, (e, r) =>
      e ? reject(e) : resolve(by(r!)),
    ),
  );
let edsAt = 0;
xdsClient.watch(endpointResourceType, "switch-cluster", {
  onResourceChanged: () => {
    edsAt ||= performance.now();
  },
  onAmbientError: () => {},
});
for (let i = 0; i < 300; i++) await Promise.all([ours(), peer()]);

const backends: EchoBackend[] = [first];
const rows: Record<"ours" | "peer", number[][]> = { ours: [], peer: [] };
const columns = ["EDS received", "connection", "request", "handler", "response", "first call back"];
for (let round = 0; round < rounds; round++) {
  const side = round % 2 === 0 ? "ours" : "peer";
  const call = side === "ours" ? ours : peer;
  const to = await startEchoBackend(`n${round}`);
  backends.push(to);
  if (!cold) {
    const warm = callOf(createGrpcTransport({ baseUrl: `http://${to.address}` }));
    for (let i = 0; i < 300; i++) await warm();
  }
  await to.marks();
  let reachedAt = 0;
  edsAt = 0;
  const started = performance.now();
  server.setResource(assignment(to.address));
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (reachedAt === 0) {
        const answeredBy = await call().catch(() => "");
        if (answeredBy === `n${round}` && reachedAt === 0) reachedAt = performance.now();
      }
    }),
  );
  const marks = await to.marks();
  const since = (at: number | undefined) => (at === undefined ? Number.NaN : at - performance.timeOrigin - started);
  const row = [
    edsAt - started,
    since(marks.connection),
    since(marks.request),
    since(marks.handler),
    since(marks.finish),
    reachedAt - started,
  ];
  rows[side].push(row);
  console.log(`${side} round ${round}: ${row.map((v, i) => `${columns[i]} ${v.toFixed(1)}`).join(", ")} ms`);
}
for (const side of ["ours", "peer"] as const) {
  const medians = columns.map((_, i) => median(rows[side].map((row) => row[i]!)).toFixed(1));
  console.log(`${side} median: ${columns.map((c, i) => `${c} ${medians[i]}`).join(", ")} ms`);
}
for (const backend of backends) backend.child.kill();
grpcClient.close();
await transport.close();
await xdsClient.close();
await server.close();
process.exit(0);
