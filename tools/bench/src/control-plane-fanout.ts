// @xdskit/control-plane fan-out: 10,000 clusters to 100 and to 1,000 concurrent ADS streams, SotW and delta.
//
// Steps, for each scenario (protocol x streams): (1) the top level runs each server kind in a process of its own (this
// file with `--server <kind> <protocol> <streams>`), which forks the clients (this file with `--child`), so the RSS
// measured is the server's alone; (2) the clients, grpc-js channels as grpc-js-xds uses them (one HTTP/2 connection
// each), open the streams, each a wildcard CDS subscription from its own node, and report when every stream holds
// the full state of 10,000 clusters (each then ACKs it); (3) one cluster changes, and the clients report when every
// stream has the change (SotW: the new full state, LDS/CDS responses carry every resource; delta: the one cluster);
// then more clusters change the same way (LATER_CHANGES: 3 in SotW, 5 in delta), one at a time (each once every
// stream has the one before and a pause let the ACKs land), and the median of their times is reported: the first
// change after setup also pays for compiling what the setup never ran (it is what a user's first change costs), the
// median is what each later change costs (one shot of it swings too much to compare); (4) the same changes against
// a baseline measured in the same run: a grpc-js server writing one pre-encoded response to every stream, with no
// xDS logic (the transport floor). Ratios are control plane / baseline. With 100 streams, five process pairs run
// (control plane, then baseline) and every figure is the median over them: the first change is one shot per
// process. The server's CPU time over each change, all threads and the main thread alone, is reported beside the
// wall clock (lib/change-cpu.ts). Server RSS is sampled every 10 ms; heap is read at the end as it is, then after a
// forced GC. Not a test: nothing asserts on time.
//
// The clients read only the top-level fields of each response (count of `resources`, nonce): they cost the same
// for both servers, and a full decode of 1,000 x 10,000 clusters in one client process would measure the clients.
//
//   node tools/bench/dist/control-plane-fanout.js [sotw|delta] [streams...]   (default: both protocols, 100 and 1000)
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { buildCluster, CDS_TYPE_URL, createManagementServer } from "@xdskit/control-plane";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import {
  DeltaDiscoveryRequestSchema,
  DeltaDiscoveryResponseSchema,
  DiscoveryRequestSchema,
  DiscoveryResponseSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { type ChangeCpuFigures, changeCpuRows, withChangeCpu } from "./lib/change-cpu.js";
import { median, medianOfRuns } from "./lib/measure.js";
import {
  ClientProcess,
  printResult,
  runInOwnProcess,
  scanResponse,
  serveServerProcess,
  withPeakRss,
} from "./lib/processes.js";
import { type AdsRequest, openRawAdsCall, type Protocol, type RawServerCall, serveRawAds } from "./lib/raw-ads.js";
import { smallRun } from "./lib/scale.js";
import { int, printTable, ratio } from "./lib/table.js";

/** 1,000 in the regression check's small run (lib/scale.ts). */
const CLUSTERS = smallRun ? 1_000 : 10_000;
/**
 * Changes after the first one, whose median is reported: fewer in SotW, where each is a full state (at 1,000 streams,
 * seconds each on a busy machine), to keep the run about as long as one second change made it.
 */
const LATER_CHANGES = { sotw: 3, delta: 5 } as const satisfies Record<Protocol, number>;
const TIMEOUT_MS = 300_000;
/**
 * Server process pairs (control plane, then baseline) per scenario of at most 100 streams. The first change is one
 * shot per process and moves by half between processes of the same build, so each figure is the median over the
 * pairs, and the first change's ratio in each pair is printed under the table. One pair for 1,000 streams, whose
 * run takes minutes.
 */
const PAIRS_UP_TO_100_STREAMS = 5;

type ServerKind = "control-plane" | "baseline";

interface Scenario {
  readonly protocol: Protocol;
  readonly streams: number;
}

// --- messages between the processes ------------------------------------------------------------------------------

type ToChild =
  | { readonly type: "connect"; readonly address: string; readonly scenario: Scenario }
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
  /** Resolves with the next response carrying `count` resources (the full state, or the change). */
  next(count: number): Promise<void>;
}

function openStream(address: string, protocol: Protocol, index: number): ClientStream {
  const { call, close } = openRawAdsCall(address, protocol);
  const request = (nonce: string): Buffer =>
    Buffer.from(
      protocol === "sotw"
        ? toBinary(
            DiscoveryRequestSchema,
            create(DiscoveryRequestSchema, {
              ...(nonce ? {} : { node: { id: `bench-client-${index}` } }),
              typeUrl: CDS_TYPE_URL,
              responseNonce: nonce,
            }),
          )
        : toBinary(
            DeltaDiscoveryRequestSchema,
            create(DeltaDiscoveryRequestSchema, {
              ...(nonce ? {} : { node: { id: `bench-client-${index}` } }),
              typeUrl: CDS_TYPE_URL,
              responseNonce: nonce,
            }),
          ),
    );
  const waiting: { count: number; resolve: () => void }[] = [];
  call.on("data", (bytes: Buffer) => {
    const { resources, nonce } = scanResponse(bytes);
    call.write(request(nonce));
    if (waiting[0]?.count === resources) waiting.shift()?.resolve();
  });
  call.write(request(""));
  return {
    close,
    next: (count) => new Promise((resolve) => waiting.push({ count, resolve })),
  };
}

function runChild(): void {
  let streams: ClientStream[] = [];
  let protocol: Protocol = "sotw";
  serveServerProcess<ToChild, ToParent>(async (message, send) => {
    if (message.type === "connect") {
      protocol = message.scenario.protocol;
      const start = performance.now();
      streams = Array.from({ length: message.scenario.streams }, (_, i) => openStream(message.address, protocol, i));
      const times = await Promise.all(streams.map((s) => s.next(CLUSTERS).then(() => performance.now() - start)));
      times.sort((a, b) => a - b);
      send({ type: "connected", slowestMs: times.at(-1) ?? 0, medianMs: times[times.length >> 1] ?? 0 });
    } else if (message.type === "expect-update") {
      const start = performance.now();
      // Every stream holds the full state and ACKed it: its next response is the update.
      const count = protocol === "sotw" ? CLUSTERS : 1;
      const pending = Promise.all(streams.map((s) => s.next(count).then(() => performance.now() - start)));
      send({ type: "armed" });
      const times = await pending;
      send({ type: "updated", slowestMs: Math.max(...times) });
    } else {
      for (const stream of streams) stream.close();
      setTimeout(() => process.exit(0), 100);
    }
  });
}

// --- the servers (server process) --------------------------------------------------------------------------------

interface ServerUnderTest {
  /** `host:port` */
  readonly address: string;
  /** Changes one cluster: step `n` changes cluster-`n`. */
  update(step: number): void;
  close(): Promise<void>;
}

/** The clusters after `changes` updates (update `step` changes cluster-`step`). */
function clusters(changes: number) {
  return Array.from({ length: CLUSTERS }, (_, i) =>
    buildCluster({ name: `cluster-${i}`, edsServiceName: i < changes ? `cluster-${i}-v2` : "" }),
  );
}

async function startControlPlane(): Promise<ServerUnderTest> {
  const server = await createManagementServer({ historyLimit: 1000 });
  server.setSnapshot(clusters(0));
  return {
    address: server.address,
    update: (step) => {
      server.setResource(buildCluster({ name: `cluster-${step}`, edsServiceName: `cluster-${step}-v2` }));
    },
    close: () => server.close(),
  };
}

/** The transport floor: a grpc-js server writing one pre-encoded response to every stream, no xDS logic. */
async function startBaseline(protocol: Protocol): Promise<ServerUnderTest> {
  const resources = (changes: number, only?: number) =>
    clusters(changes)
      .filter((_, i) => only === undefined || i === only)
      .map((cluster, i) =>
        protocol === "sotw"
          ? anyPack(ClusterSchema, cluster)
          : { name: cluster.name, version: String(i), resource: anyPack(ClusterSchema, cluster) },
      );
  /** The response after `changes` updates: the full state, or (delta) the cluster the last one changed. */
  const encoded = (version: string, changes: number): Buffer =>
    Buffer.from(
      protocol === "sotw"
        ? toBinary(
            DiscoveryResponseSchema,
            create(DiscoveryResponseSchema, {
              typeUrl: CDS_TYPE_URL,
              versionInfo: version,
              nonce: version,
              resources: resources(changes) as never,
            }),
          )
        : toBinary(
            DeltaDiscoveryResponseSchema,
            create(DeltaDiscoveryResponseSchema, {
              typeUrl: CDS_TYPE_URL,
              systemVersionInfo: version,
              nonce: version,
              resources: resources(changes, changes > 0 ? changes - 1 : undefined) as never,
            }),
          ),
    );
  const first = encoded("1", 0);
  const updates = Array.from({ length: 1 + LATER_CHANGES[protocol] }, (_, step) => encoded(String(step + 2), step + 1));
  const calls = new Set<RawServerCall>();
  const server = await serveRawAds(protocol, (call) => {
    calls.add(call);
    call.on("data", (request: AdsRequest) => {
      if (request.responseNonce === "") call.write(first);
    });
    call.on("cancelled", () => calls.delete(call));
  });
  return {
    address: server.address,
    update: (step) => {
      const response = updates[step] as Buffer;
      for (const call of calls) call.write(response);
    },
    close: () => server.close(),
  };
}

interface Measured extends ChangeCpuFigures {
  readonly setupMs: number;
  readonly initialMs: number;
  readonly initialMedianMs: number;
  readonly updateMs: number;
  /** The median of the changes after the first (LATER_CHANGES). */
  readonly laterUpdateMs: number;
  readonly idleRss: number;
  readonly peakRss: number;
  readonly heapUsed: number;
  readonly heapAfterGc: number;
}

type ChildClients = ClientProcess<ToChild, ToParent>;

async function measure(
  kind: ServerKind,
  start: () => Promise<ServerUnderTest>,
  clients: ChildClients,
  scenario: Scenario,
): Promise<Measured> {
  globalThis.gc?.();
  const setupStart = performance.now();
  const server = await start();
  const setupMs = performance.now() - setupStart;
  const idleRss = process.memoryUsage.rss();
  try {
    const { result, peakRss } = await withPeakRss(async () => {
      clients.send({ type: "connect", address: server.address, scenario });
      const connected = await clients.next("connected");
      // Let the ACKs land before the update.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const change = async (step: number): Promise<{ ms: number; cpuMs: number; mainMs: number }> => {
        clients.send({ type: "expect-update" });
        await clients.next("armed");
        const updated = clients.next("updated");
        const label = `${kind}-${scenario.protocol}-${scenario.streams}-change-${step}`;
        const {
          result: ms,
          cpuMs,
          mainMs,
        } = await withChangeCpu(label, async () => {
          const updateStart = performance.now();
          server.update(step);
          await updated;
          return performance.now() - updateStart;
        });
        return { ms, cpuMs, mainMs };
      };
      const first = await change(0);
      const later: { ms: number; cpuMs: number; mainMs: number }[] = [];
      for (let step = 1; step <= LATER_CHANGES[scenario.protocol]; step++) {
        await new Promise((resolve) => setTimeout(resolve, 300));
        later.push(await change(step));
      }
      return {
        connected,
        updateMs: first.ms,
        laterUpdateMs: median(later.map((l) => l.ms)),
        updateCpuMs: first.cpuMs,
        laterUpdateCpuMs: median(later.map((l) => l.cpuMs)),
        updateMainMs: first.mainMs,
        laterUpdateMainMs: median(later.map((l) => l.mainMs)),
      };
    });
    const heapUsed = process.memoryUsage().heapUsed;
    globalThis.gc?.();
    return {
      setupMs,
      initialMs: result.connected.slowestMs,
      initialMedianMs: result.connected.medianMs,
      updateMs: result.updateMs,
      laterUpdateMs: result.laterUpdateMs,
      updateCpuMs: result.updateCpuMs,
      laterUpdateCpuMs: result.laterUpdateCpuMs,
      updateMainMs: result.updateMainMs,
      laterUpdateMainMs: result.laterUpdateMainMs,
      idleRss,
      peakRss,
      heapUsed,
      heapAfterGc: process.memoryUsage().heapUsed,
    };
  } finally {
    await server.close();
  }
}

/** One server kind, in this process (started by the top level with `--server`): prints its result as JSON. */
async function runServer(kind: ServerKind, scenario: Scenario): Promise<void> {
  const clients: ChildClients = new ClientProcess(fileURLToPath(import.meta.url), TIMEOUT_MS);
  await clients.next("ready");
  const start = kind === "control-plane" ? startControlPlane : () => startBaseline(scenario.protocol);
  const result = await measure(kind, start, clients, scenario);
  clients.send({ type: "exit" });
  printResult(result);
  process.exit(0);
}

function runKind(kind: ServerKind, scenario: Scenario): Measured {
  const args = ["--server", kind, scenario.protocol, String(scenario.streams)];
  return runInOwnProcess<Measured>(fileURLToPath(import.meta.url), args, TIMEOUT_MS * 3);
}

function runScenario(scenario: Scenario): void {
  const pairs = scenario.streams <= 100 ? PAIRS_UP_TO_100_STREAMS : 1;
  const ours: Measured[] = [];
  const theirs: Measured[] = [];
  for (let i = 0; i < pairs; i++) {
    ours.push(runKind("control-plane", scenario));
    theirs.push(runKind("baseline", scenario));
  }
  const controlPlane = medianOfRuns(ours);
  const baseline = medianOfRuns(theirs);
  const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
  const ms = (value: number): string => `${int(value)} ms`;
  const cpu = (value: number): string => `${value < 10 ? value.toFixed(1) : int(value)} ms`;
  const row = (label: string, a: number, b: number, format: (n: number) => string): string[] => [
    label,
    format(a),
    format(b),
    ratio(a / b),
  ];
  const change = scenario.protocol === "sotw" ? "the new full CDS" : "the changed cluster";
  printTable(
    `control plane fan-out, ${scenario.protocol === "sotw" ? "SotW" : "delta"}: ${int(CLUSTERS)} clusters to ${int(scenario.streams)} streams (${int(scenario.streams)} HTTP/2 connections; server and clients in separate processes${pairs > 1 ? `; medians of ${pairs} process pairs` : ""})`,
    ["step", "@xdskit/control-plane", "baseline: grpc-js, one pre-encoded response", "ratio"],
    [
      row("setup: build and load the 10k clusters", controlPlane.setupMs, baseline.setupMs, ms),
      row("every stream has the full CDS (slowest)", controlPlane.initialMs, baseline.initialMs, ms),
      row("  (median stream)", controlPlane.initialMedianMs, baseline.initialMedianMs, ms),
      row(`1 cluster changes: every stream has ${change}`, controlPlane.updateMs, baseline.updateMs, ms),
      row(
        `  (later changes, median of ${LATER_CHANGES[scenario.protocol]})`,
        controlPlane.laterUpdateMs,
        baseline.laterUpdateMs,
        ms,
      ),
      ...changeCpuRows((label, a, b) => row(label, a, b, cpu), controlPlane, baseline),
      row("server RSS after setup", controlPlane.idleRss, baseline.idleRss, mb),
      row("server RSS peak", controlPlane.peakRss, baseline.peakRss, mb),
      row("server heap used at the end", controlPlane.heapUsed, baseline.heapUsed, mb),
      row("  (after a forced GC)", controlPlane.heapAfterGc, baseline.heapAfterGc, mb),
    ],
  );
  if (pairs > 1) {
    const each = ours.map((run, i) => run.updateMs / theirs[i]!.updateMs);
    console.log(
      `1 cluster changes, the first change in each pair (control plane / baseline): ${each.map((r) => ratio(r)).join(", ")}; median ${ratio(median(each))}\n`,
    );
  }
}

function runTop(): void {
  const args = process.argv.slice(2);
  const protocols = args.filter((a): a is Protocol => a === "sotw" || a === "delta");
  const counts = args.map(Number).filter((n) => Number.isInteger(n) && n > 0);
  for (const protocol of protocols.length > 0 ? protocols : (["sotw", "delta"] as const)) {
    for (const streams of counts.length > 0 ? counts : [100, 1000]) runScenario({ protocol, streams });
  }
}

const serverArg = process.argv.indexOf("--server");
if (process.argv.includes("--child")) runChild();
else if (serverArg > 0) {
  const [kind, protocol, streams] = process.argv.slice(serverArg + 1);
  await runServer(kind === "baseline" ? "baseline" : "control-plane", {
    protocol: protocol === "delta" ? "delta" : "sotw",
    streams: Number(streams),
  });
} else runTop();
