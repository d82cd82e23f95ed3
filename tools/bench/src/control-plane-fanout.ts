// @xdskit/control-plane fan-out: 10,000 clusters to 100 concurrent ADS streams.
//
// Steps: (1) the top level runs each server kind in a process of its own (this file with `--server <kind>`), which
// forks the clients (this file with `--child`), so the RSS measured is the server's alone; (2) the clients, grpc-js
// channels as grpc-js-xds uses them (one HTTP/2 connection each, messages decoded with protobuf-es), open 100 SotW
// streams, each a wildcard CDS subscription from its own node, and report when every stream holds the full response
// of 10,000 clusters (then ACK it); (3) one cluster changes, and the clients report when every stream has the new
// full state (LDS/CDS responses always carry every resource); (4) the same against a baseline measured in the same
// run: a grpc-js server writing one pre-encoded response to every stream, with no xDS logic (the transport floor).
// Ratios are control plane / baseline. Server RSS is sampled every 10 ms. Not a test: nothing asserts on time.
import { type ChildProcess, execFileSync, fork } from "node:child_process";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import { buildCluster, CDS_TYPE_URL, createManagementServer } from "@xdskit/control-plane";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { int, printTable, ratio } from "./lib/table.js";

const ADS_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";
const CLUSTERS = 10_000;
const STREAMS = 100;
const TIMEOUT_MS = 120_000;

// --- messages between the processes ------------------------------------------------------------------------------

type ToChild =
  | { readonly type: "connect"; readonly address: string }
  | { readonly type: "expect-update" }
  | { readonly type: "exit" };

type ToParent =
  | { readonly type: "ready" }
  | { readonly type: "connected"; readonly slowestMs: number; readonly medianMs: number }
  | { readonly type: "armed" }
  | { readonly type: "updated"; readonly slowestMs: number }
  | { readonly type: "failed"; readonly error: string };

// --- the clients (child process) ---------------------------------------------------------------------------------

interface ClientStream {
  readonly close: () => void;
  /** Resolves with the next response that carries every cluster. */
  nextFull(): Promise<DiscoveryResponse>;
}

const serializeRequest = (request: DiscoveryRequest): Buffer => Buffer.from(toBinary(DiscoveryRequestSchema, request));
const deserializeResponse = (bytes: Buffer): DiscoveryResponse => fromBinary(DiscoveryResponseSchema, bytes);

function openStream(address: string, index: number): ClientStream {
  // A local subchannel pool: each client its own connection, as separate processes would have.
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 });
  const call = client.makeBidiStreamRequest(ADS_PATH, serializeRequest, deserializeResponse);
  const waiting: ((response: DiscoveryResponse) => void)[] = [];
  call.on("data", (response: DiscoveryResponse) => {
    if (response.resources.length !== CLUSTERS) return;
    waiting.shift()?.(response);
    call.write(
      create(DiscoveryRequestSchema, {
        typeUrl: CDS_TYPE_URL,
        versionInfo: response.versionInfo,
        responseNonce: response.nonce,
      }),
    );
  });
  call.on("error", () => {
    // Cancelled at the end.
  });
  call.write(create(DiscoveryRequestSchema, { node: { id: `bench-client-${index}` }, typeUrl: CDS_TYPE_URL }));
  return {
    close: () => {
      call.cancel();
      client.close();
    },
    nextFull: () => new Promise((resolve) => waiting.push(resolve)),
  };
}

async function runChild(): Promise<void> {
  const send = (message: ToParent): void => {
    process.send?.(message);
  };
  let streams: ClientStream[] = [];
  process.on("message", async (message: ToChild) => {
    try {
      if (message.type === "connect") {
        for (const stream of streams) stream.close();
        const start = performance.now();
        streams = Array.from({ length: STREAMS }, (_, i) => openStream(message.address, i));
        const times = await Promise.all(streams.map((s) => s.nextFull().then(() => performance.now() - start)));
        times.sort((a, b) => a - b);
        send({ type: "connected", slowestMs: times.at(-1) ?? 0, medianMs: times[times.length >> 1] ?? 0 });
      } else if (message.type === "expect-update") {
        const start = performance.now();
        // Every stream holds the full state and ACKed it: its next full response is the update.
        const pending = Promise.all(streams.map((s) => s.nextFull().then(() => performance.now() - start)));
        send({ type: "armed" });
        const times = await pending;
        send({ type: "updated", slowestMs: Math.max(...times) });
      } else {
        for (const stream of streams) stream.close();
        setTimeout(() => process.exit(0), 100);
      }
    } catch (error) {
      send({ type: "failed", error: String(error) });
    }
  });
  send({ type: "ready" });
}

// --- the servers (parent process) --------------------------------------------------------------------------------

interface ServerUnderTest {
  /** `host:port` */
  readonly address: string;
  /** Changes one cluster. */
  update(): void;
  close(): Promise<void>;
}

function clusters(changed: boolean) {
  return Array.from({ length: CLUSTERS }, (_, i) =>
    buildCluster({ name: `cluster-${i}`, edsServiceName: changed && i === 0 ? "cluster-0-v2" : "" }),
  );
}

async function startControlPlane(): Promise<ServerUnderTest> {
  const server = await createManagementServer({ historyLimit: 1000 });
  server.setSnapshot(clusters(false));
  return {
    address: server.address,
    update: () => {
      server.setResource(buildCluster({ name: "cluster-0", edsServiceName: "cluster-0-v2" }));
    },
    close: () => server.close(),
  };
}

/** The transport floor: a grpc-js server writing one pre-encoded response to every stream, no xDS logic. */
async function startBaseline(): Promise<ServerUnderTest> {
  const encoded = (version: string, changed: boolean): Buffer =>
    Buffer.from(
      toBinary(
        DiscoveryResponseSchema,
        create(DiscoveryResponseSchema, {
          typeUrl: CDS_TYPE_URL,
          versionInfo: version,
          nonce: version,
          resources: clusters(changed).map((c) => anyPack(ClusterSchema, c)),
        }),
      ),
    );
  const first = encoded("1", false);
  const second = encoded("2", true);
  const calls = new Set<grpc.ServerDuplexStream<Buffer, Buffer>>();
  const identity = (bytes: Buffer): Buffer => bytes;
  const server = new grpc.Server();
  server.addService(
    {
      StreamAggregatedResources: {
        path: ADS_PATH,
        requestStream: true,
        responseStream: true,
        requestSerialize: identity,
        requestDeserialize: (bytes: Buffer) => fromBinary(DiscoveryRequestSchema, bytes),
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    },
    {
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<DiscoveryRequest, Buffer>) => {
        calls.add(call as unknown as grpc.ServerDuplexStream<Buffer, Buffer>);
        call.on("data", (request: DiscoveryRequest) => {
          if (request.responseNonce === "") call.write(first);
        });
        call.on("error", () => {});
        call.on("cancelled", () => calls.delete(call as unknown as grpc.ServerDuplexStream<Buffer, Buffer>));
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    update: () => {
      for (const call of calls) call.write(second);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.forceShutdown();
        resolve();
      }),
  };
}

// --- the run (parent process) ------------------------------------------------------------------------------------

class ChildClients {
  readonly #child: ChildProcess;
  readonly #waiting: ((message: ToParent) => void)[] = [];

  constructor() {
    this.#child = fork(fileURLToPath(import.meta.url), ["--child"], { stdio: "inherit" });
    this.#child.on("message", (message: ToParent) => {
      if (message.type === "failed") {
        process.stderr.write(`client process failed: ${message.error}\n`);
        process.exit(1);
      }
      this.#waiting.shift()?.(message);
    });
  }

  next<T extends ToParent["type"]>(type: T): Promise<Extract<ToParent, { type: T }>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for "${type}"`)), TIMEOUT_MS);
      this.#waiting.push((message) => {
        clearTimeout(timer);
        if (message.type === type) resolve(message as Extract<ToParent, { type: T }>);
        else reject(new Error(`expected "${type}", got "${message.type}"`));
      });
    });
  }

  send(message: ToChild): void {
    this.#child.send(message);
  }
}

/** Peak RSS of this process while `work` runs, sampled every 10 ms. */
async function withPeakRss<T>(work: () => Promise<T>): Promise<{ result: T; peakRss: number }> {
  let peakRss = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 10);
  try {
    const result = await work();
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    return { result, peakRss };
  } finally {
    clearInterval(timer);
  }
}

interface Measured {
  readonly setupMs: number;
  readonly initialMs: number;
  readonly initialMedianMs: number;
  readonly updateMs: number;
  readonly idleRss: number;
  readonly peakRss: number;
  readonly heapUsed: number;
}

async function measure(start: () => Promise<ServerUnderTest>, clients: ChildClients): Promise<Measured> {
  globalThis.gc?.();
  const setupStart = performance.now();
  const server = await start();
  const setupMs = performance.now() - setupStart;
  const idleRss = process.memoryUsage.rss();
  try {
    const { result, peakRss } = await withPeakRss(async () => {
      clients.send({ type: "connect", address: server.address });
      const connected = await clients.next("connected");
      // Let the ACKs land before the update.
      await new Promise((resolve) => setTimeout(resolve, 200));
      clients.send({ type: "expect-update" });
      await clients.next("armed");
      const updated = clients.next("updated");
      const updateStart = performance.now();
      server.update();
      await updated;
      return { connected, updateMs: performance.now() - updateStart };
    });
    return {
      setupMs,
      initialMs: result.connected.slowestMs,
      initialMedianMs: result.connected.medianMs,
      updateMs: result.updateMs,
      idleRss,
      peakRss,
      heapUsed: process.memoryUsage().heapUsed,
    };
  } finally {
    await server.close();
  }
}

/** One server kind, in this process (started by the top level with `--server <kind>`): prints its result as JSON. */
async function runServer(kind: ServerKind): Promise<void> {
  const clients = new ChildClients();
  await clients.next("ready");
  const result = await measure(kind === "control-plane" ? startControlPlane : startBaseline, clients);
  clients.send({ type: "exit" });
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
  process.exit(0);
}

function runKind(kind: ServerKind): Measured {
  const output = execFileSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), "--server", kind], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    timeout: TIMEOUT_MS * 3,
  });
  const line = output.split("\n").find((l) => l.startsWith(RESULT_PREFIX));
  if (!line) throw new Error(`no result from the ${kind} run:\n${output}`);
  return JSON.parse(line.slice(RESULT_PREFIX.length)) as Measured;
}

function runTop(): void {
  const controlPlane = runKind("control-plane");
  const baseline = runKind("baseline");
  const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
  const ms = (value: number): string => `${int(value)} ms`;
  const row = (label: string, a: number, b: number, format: (n: number) => string): string[] => [
    label,
    format(a),
    format(b),
    ratio(a / b),
  ];
  printTable(
    `control plane fan-out: ${int(CLUSTERS)} clusters to ${STREAMS} streams (${STREAMS} HTTP/2 connections; server and clients in separate processes)`,
    ["step", "@xdskit/control-plane", "baseline: grpc-js, one pre-encoded response", "ratio"],
    [
      row("setup: build and load the 10k clusters", controlPlane.setupMs, baseline.setupMs, ms),
      row("every stream has the full CDS (slowest)", controlPlane.initialMs, baseline.initialMs, ms),
      row("  (median stream)", controlPlane.initialMedianMs, baseline.initialMedianMs, ms),
      row("1 cluster changes: every stream has the new full CDS", controlPlane.updateMs, baseline.updateMs, ms),
      row("server RSS after setup", controlPlane.idleRss, baseline.idleRss, mb),
      row("server RSS peak", controlPlane.peakRss, baseline.peakRss, mb),
      row("server heap used at the end", controlPlane.heapUsed, baseline.heapUsed, mb),
    ],
  );
}

const RESULT_PREFIX = "RESULT ";
type ServerKind = "control-plane" | "baseline";

const serverArg = process.argv.indexOf("--server");
if (process.argv.includes("--child")) await runChild();
else if (serverArg > 0) await runServer(process.argv[serverArg + 1] === "baseline" ? "baseline" : "control-plane");
else runTop();
