// mTLS calls through a mesh configured by xDS, in one run: our client (`createXdsTransport`) to our server
// (`createXdsServer`), beside grpc-js-xds's client (`XdsChannelCredentials`) to its `XdsServer`
// (`XdsServerCredentials`), both over the same control plane, with certificates from files (`file_watcher`), client
// certificates required and the server's SPIFFE ID checked by the client. The servers run in child processes
// (workers/mesh-server-worker.ts), so the CPU measured here is the client's. Steps:
//  1. Calls per second: 10,000 unary calls at concurrency 100 per round, rounds alternating between the two pairs,
//     medians compared; with the client's CPU per call and the server's. A third row, our client to grpc-js-xds's
//     server, separates the client's share from the server's.
//  2. A certificate rotation under load: new certificate files for both sides (the same CA), then a new server
//     Listener (the servers drain their connections, the clients reconnect with the new material) while 20,000 calls
//     per pair run at concurrency 50: the calls that failed (the goal is none), how many started after the new
//     Listener, and whether a new connection is then shown the new server certificate.
// `--quick` makes fewer rounds. Not a test: it prints figures and ratios, and gates nothing.
import { type ChildProcess, fork } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import * as grpcJsXds from "@grpc/grpc-js-xds";
import { createXdsTransport } from "@xdskit/connect-xds";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  buildServerListener,
  buildServerRouteConfiguration,
  buildUpstreamTlsSocket,
  createManagementServer,
} from "@xdskit/control-plane";
import { createTestCa, writeCertificate } from "@xdskit/test-pki";
import { deserializeText, ECHO_PATH, EchoService, serializeText } from "./lib/echo-service.js";
import { median } from "./lib/measure.js";
import { int, printTable, ratio } from "./lib/table.js";

const quick = process.argv.includes("--quick");
const profileAt = process.argv.indexOf("--cpu-prof-dir");
/** `--cpu-prof-dir <dir>`: the server workers write V8 CPU profiles there when they exit. */
const profileDir = profileAt < 0 ? undefined : process.argv[profileAt + 1];
const progress = (line: string) => process.stderr.write(`[mesh-mtls] ${line}\n`);
const ROUNDS = quick ? 3 : 7;
const CALLS = 10_000;
const SERVER_ID = "spiffe://bench.example/sa/server";
const CLIENT_ID = "spiffe://bench.example/sa/client";
const worker = join(dirname(fileURLToPath(import.meta.url)), "workers", "mesh-server-worker.js");

type Implementation = "xdskit" | "grpc-js-xds";
const IMPLEMENTATIONS: readonly Implementation[] = ["xdskit", "grpc-js-xds"];

const dir = mkdtempSync(join(tmpdir(), "bench-mesh-"));
const ca = createTestCa({ commonName: "bench mesh CA" });
writeFileSync(join(dir, "ca.pem"), ca.cert);
/** Writes new identities for both sides; returns the server certificate's SHA-256 fingerprint. */
function writeIdentities(): string {
  const server = ca.issue({ commonName: "server", uris: [SERVER_ID] });
  writeCertificate(dir, "server", server);
  writeCertificate(dir, "client", ca.issue({ commonName: "client", uris: [CLIENT_ID] }));
  return new X509Certificate(server.cert).fingerprint256;
}
writeIdentities();

const controlPlane = await createManagementServer({ lrsPolicy: { intervalMs: 60_000 } });

function bootstrap(role: "server" | "client") {
  return {
    xds_servers: [{ server_uri: controlPlane.address, channel_creds: [{ type: "insecure" }] }],
    node: { id: `bench-mesh-${role}`, cluster: "bench", locality: { region: "r", zone: "z" } },
    ...(role === "server"
      ? { server_listener_resource_name_template: "grpc/server?xds.resource.listening_address=%s" }
      : {}),
    certificate_providers: {
      mesh: {
        plugin_name: "file_watcher",
        config: {
          certificate_file: join(dir, `${role}.pem`),
          private_key_file: join(dir, `${role}-key.pem`),
          ca_certificate_file: join(dir, "ca.pem"),
          refresh_interval: "0.2s",
        },
      },
    },
  };
}

interface MeshServer {
  readonly child: ChildProcess;
  readonly port: number;
  readonly listenerName: string;
  readonly serving: Promise<void>;
  cpuUs(): Promise<number>;
}

function startServer(implementation: Implementation): Promise<MeshServer> {
  const child = fork(worker, [implementation, JSON.stringify(bootstrap("server"))], {
    stdio: "inherit",
    ...(profileDir === undefined ? {} : { execArgv: ["--cpu-prof", "--cpu-prof-dir", profileDir] }),
  });
  let served = () => {};
  const serving = new Promise<void>((resolve) => {
    served = resolve;
  });
  child.on("message", (message: { serving?: boolean }) => {
    if (message.serving === true) served();
  });
  const cpuUs = () =>
    new Promise<number>((resolve) => {
      const onMessage = (message: { cpuUs?: number }) => {
        if (message.cpuUs === undefined) return;
        child.off("message", onMessage);
        resolve(message.cpuUs);
      };
      child.on("message", onMessage);
      child.send("cpu");
    });
  return new Promise((resolve) => {
    const onMessage = (message: { port?: number; listenerName?: string }) => {
      if (message.port === undefined) return;
      child.off("message", onMessage);
      resolve({ child, port: message.port, listenerName: message.listenerName ?? "", serving, cpuUs });
    };
    child.on("message", onMessage);
  });
}

const servers = new Map<Implementation, MeshServer>();
for (const implementation of IMPLEMENTATIONS) {
  servers.set(implementation, await startServer(implementation));
  progress(`${implementation} server bound`);
}

let generation = 0;
/** Every resource: each server's Listener (mTLS, client certificates required) and each client's path to its server. */
function publish(): void {
  generation++;
  controlPlane.setSnapshot(
    IMPLEMENTATIONS.flatMap((implementation) => {
      const server = servers.get(implementation)!;
      const name = `mesh-${implementation}`;
      return [
        buildServerListener({
          name: server.listenerName,
          address: { host: "127.0.0.1", port: server.port },
          filterChains: [
            {
              // A new name makes a new Listener: the servers drain their connections (the rotation step).
              name: `mesh-${generation}`,
              tls: { identity: "mesh", roots: "mesh", requireClientCertificate: true },
              routeConfig: buildServerRouteConfiguration({ name: "inline" }),
            },
          ],
        }),
        buildListener({ name, routeConfigName: `${name}-route` }),
        buildRouteConfiguration({ name: `${name}-route`, cluster: `${name}-cluster` }),
        buildCluster({
          name: `${name}-cluster`,
          transportSocket: buildUpstreamTlsSocket({
            roots: "mesh",
            identity: "mesh",
            matchSubjectAltNames: [SERVER_ID],
          }),
        }),
        buildClusterLoadAssignment({
          clusterName: `${name}-cluster`,
          localities: [{ zone: "z", endpoints: [`127.0.0.1:${server.port}`] }],
        }),
      ];
    }).concat(crossResources()),
  );
}

/** Our client to grpc-js-xds's server: the client's share of the difference, on the same server. */
function crossResources() {
  const server = servers.get("grpc-js-xds")!;
  return [
    buildListener({ name: "mesh-cross", routeConfigName: "mesh-cross-route" }),
    buildRouteConfiguration({ name: "mesh-cross-route", cluster: "mesh-cross-cluster" }),
    buildCluster({
      name: "mesh-cross-cluster",
      transportSocket: buildUpstreamTlsSocket({ roots: "mesh", identity: "mesh", matchSubjectAltNames: [SERVER_ID] }),
    }),
    buildClusterLoadAssignment({
      clusterName: "mesh-cross-cluster",
      localities: [{ zone: "z", endpoints: [`127.0.0.1:${server.port}`] }],
    }),
  ];
}
publish();
await Promise.all([...servers.values()].map((server) => server.serving));
progress("both servers serve");

type Call = () => Promise<unknown>;
const request = create(StringValueSchema, { value: "x" });

const ours = createXdsTransport({ target: "xds:///mesh-xdskit", bootstrap: bootstrap("client") as never });
const ourEcho = createClient(EchoService, ours) as unknown as {
  unary(r: object, options: { timeoutMs: number }): Promise<{ value: string }>;
};
grpcJsXds.register();
const peer = new grpc.Client(
  "xds:///mesh-grpc-js-xds",
  new grpcJsXds.XdsChannelCredentials(grpc.credentials.createInsecure()),
  { "grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config": JSON.stringify(bootstrap("client")) },
);
// Every call has a deadline: a call that can never complete is a failure, not a hang.
const deadline = () => ({ deadline: Date.now() + 10_000 });
const cross = createXdsTransport({ target: "xds:///mesh-cross", bootstrap: bootstrap("client") as never });
const crossEcho = createClient(EchoService, cross) as unknown as {
  unary(r: object, options: { timeoutMs: number }): Promise<{ value: string }>;
};
const callCross: Call = () => crossEcho.unary(request, { timeoutMs: 10_000 });
const calls: Record<Implementation, Call> = {
  xdskit: () => ourEcho.unary(request, { timeoutMs: 10_000 }),
  "grpc-js-xds": () =>
    new Promise((resolve, reject) =>
      peer.makeUnaryRequest(
        ECHO_PATH,
        serializeText,
        deserializeText,
        "x",
        new grpc.Metadata(),
        deadline(),
        (error, value) => (error ? reject(error) : resolve(value)),
      ),
    ),
};

/** `total` calls with `concurrency` in flight; failures counted, not thrown. */
async function run(call: Call, total: number, concurrency: number, server: MeshServer) {
  let next = 0;
  let failed = 0;
  let firstError: unknown;
  const serverCpu = await server.cpuUs();
  const cpu = process.cpuUsage();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        await call().catch((error: unknown) => {
          failed++;
          firstError ??= error;
        });
      }
    }),
  );
  const elapsedMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return {
    callsPerSecond: (total / elapsedMs) * 1000,
    cpuPerCallUs: (used.user + used.system) / total,
    serverCpuPerCallUs: ((await server.cpuUs()) - serverCpu) / total,
    failed,
    firstError,
  };
}

// Warm-up: connections made (TLS handshakes), code compiled.
for (const implementation of IMPLEMENTATIONS) {
  const warm = await run(calls[implementation], 2_000, 50, servers.get(implementation)!);
  progress(
    `${implementation} warmed up (${warm.failed} failed${warm.failed > 0 ? `: ${String(warm.firstError)}` : ""})`,
  );
}

await run(callCross, 2_000, 50, servers.get("grpc-js-xds")!);
const results = new Map<Implementation, Awaited<ReturnType<typeof run>>[]>(IMPLEMENTATIONS.map((i) => [i, []]));
const crossResults: Awaited<ReturnType<typeof run>>[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? IMPLEMENTATIONS : [...IMPLEMENTATIONS].reverse();
  for (const implementation of order) {
    results.get(implementation)!.push(await run(calls[implementation], CALLS, 100, servers.get(implementation)!));
  }
  crossResults.push(await run(callCross, CALLS, 100, servers.get("grpc-js-xds")!));
}
results.set("cross" as Implementation, crossResults);
const LABELS: Record<string, string> = {
  xdskit: "connect-xds -> connect-xds-server",
  "grpc-js-xds": "grpc-js-xds -> XdsServer",
  cross: "connect-xds -> XdsServer",
};
const peerRate = median(results.get("grpc-js-xds")!.map((r) => r.callsPerSecond));
printTable(
  `mTLS unary calls per second, ${int(CALLS)} calls at concurrency 100, median of ${ROUNDS} rounds (goal: xdskit >= 1.2x)`,
  ["client -> server", "calls/s", "range", "vs grpc-js-xds", "client CPU/call", "server CPU/call", "failed"],
  [...results.keys()].map((implementation) => {
    const rows = results.get(implementation)!;
    const rates = rows.map((r) => r.callsPerSecond);
    return [
      LABELS[implementation] ?? implementation,
      int(median(rates)),
      `${int(Math.min(...rates))}-${int(Math.max(...rates))}`,
      ratio(median(rates) / peerRate),
      `${median(rows.map((r) => r.cpuPerCallUs)).toFixed(1)} us`,
      `${median(rows.map((r) => r.serverCpuPerCallUs)).toFixed(1)} us`,
      int(rows.reduce((sum, r) => sum + r.failed, 0)),
    ];
  }),
);

// Rotation under load: new files, read by every provider within 0.2 s, then a new Listener while calls run. The
// load is long enough (20,000 calls per pair) that calls start after the new Listener too; how many is printed.
let publishedAt = Number.POSITIVE_INFINITY;
const startedAfter = new Map<Implementation, number>(IMPLEMENTATIONS.map((i) => [i, 0]));
const rotation = IMPLEMENTATIONS.map((implementation) => {
  const call: Call = () => {
    if (performance.now() > publishedAt) startedAfter.set(implementation, startedAfter.get(implementation)! + 1);
    return calls[implementation]();
  };
  return { implementation, load: run(call, 20_000, 50, servers.get(implementation)!) };
});
const rotatedFingerprint = writeIdentities();
await new Promise((resolve) => setTimeout(resolve, 500));
publish();
publishedAt = performance.now();
const rotated = await Promise.all(
  rotation.map(async ({ implementation, load }) => ({ implementation, ...(await load) })),
);

/** The SHA-256 fingerprint of the certificate a new mTLS connection to `port` is shown. */
function presentedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host: "127.0.0.1",
      port,
      ca: ca.cert,
      cert: readFileSync(join(dir, "client.pem")),
      key: readFileSync(join(dir, "client-key.pem")),
      ALPNProtocols: ["h2"],
      checkServerIdentity: () => undefined,
    });
    socket.once("secureConnect", () => {
      resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? "none");
      socket.destroy();
    });
    socket.once("error", reject);
  });
}
const presented = new Map<Implementation, string>();
for (const implementation of IMPLEMENTATIONS) {
  presented.set(
    implementation,
    await presentedFingerprint(servers.get(implementation)!.port).catch((e: Error) => `error: ${e.message}`),
  );
}
printTable(
  "A certificate rotation under load: new files, then a new server Listener (drain and reconnect), 20,000 calls at concurrency 50 per pair (goal: none fails)",
  [
    "client -> server",
    "failed calls",
    "calls started after the new Listener",
    "new connections get the new certificate",
    "first error",
  ],
  rotated.map((r) => [
    r.implementation === "xdskit" ? "connect-xds -> connect-xds-server" : "grpc-js-xds -> XdsServer",
    int(r.failed),
    int(startedAfter.get(r.implementation)!),
    presented.get(r.implementation) === rotatedFingerprint ? "yes" : `no (${presented.get(r.implementation)})`,
    r.firstError === undefined ? "-" : String((r.firstError as Error).message ?? r.firstError).slice(0, 80),
  ]),
);

await ours.close();
await cross.close();
peer.close();
for (const server of servers.values()) server.child.disconnect();
await controlPlane.close();
rmSync(dir, { recursive: true, force: true });
