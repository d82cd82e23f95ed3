// @xdskit/control-plane TP2 variants: one cluster name in 10,000 exact-value variants (`shard=0` .. `shard=9999`)
// served to 1,000 ADS streams, each subscribing to it with its own parameters (`shard=0`, `shard=10`, ...), SotW and
// delta.
//
// Steps, for each protocol: (1) each server kind runs in a process of its own (this file with `--server <kind>
// <protocol>`), which forks the clients (this file with `--child`); (2) the server publishes the 10,000 variants
// (the control plane checks them for overlaps and indexes them); (3) the clients open 1,000 streams (one HTTP/2
// connection each), each a CDS subscription by `resource_locators`, and report when every stream holds its variant
// (each then ACKs it); (4) the variant one stream holds changes: the clients report when that stream has it, and
// how many other streams got any response in the 300 ms that follow (none should); then the variants of
// LATER_CHANGES other streams change the same way, one at a time, and the median of their times is reported: the
// first change after setup also pays for compiling what the setup never ran (it is what a user's first change
// costs), the median is what each later change costs (one shot of it swings too much to compare); (5) the same
// changes against a baseline measured in the same run: a grpc-js server holding the 10,000 responses pre-encoded and
// a map from parameters to response, with no xDS logic (the floor: what serving a variant costs without choosing
// it). Ratios are control plane / baseline, each figure the median over five process pairs (PAIRS). The server's CPU
// time over each change, all threads and the main thread alone, is reported beside the wall clock (lib/change-cpu.ts).
// Not a test: nothing asserts on time.
//
//   node tools/bench/dist/control-plane-variants.js [sotw|delta]   (default: both)
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { toProto, value } from "@xdskit/constraint-matcher";
import { buildCluster, CDS_TYPE_URL, createManagementServer } from "@xdskit/control-plane";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import {
  DeltaDiscoveryRequestSchema,
  DeltaDiscoveryResponseSchema,
  DiscoveryRequestSchema,
  DiscoveryResponseSchema,
  type Resource,
  ResourceSchema,
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

const NAME = "c";
/** 1,000 variants to 100 streams in the regression check's small run (lib/scale.ts). */
const VARIANTS = smallRun ? 1_000 : 10_000;
const STREAMS = smallRun ? 100 : 1_000;
/** Stream `i` subscribes with `shard = i * SPREAD`. */
const SPREAD = VARIANTS / STREAMS;
/** The stream whose variant changes first. */
const FIRST_CHANGED = 7;
/** Changes after the first one (streams FIRST_CHANGED + 1, + 2, ...), whose median is reported. */
const LATER_CHANGES = 7;
const QUIET_MS = 300;
const TIMEOUT_MS = 300_000;
/**
 * Server process pairs (control plane, then baseline) per protocol: the first change is one shot per process, so
 * each figure is the median over the pairs, and the first change's ratio in each pair is printed under the table.
 */
const PAIRS = 5;

type ServerKind = "control-plane" | "baseline";

type ToChild =
  | { readonly type: "connect"; readonly address: string; readonly protocol: Protocol }
  | { readonly type: "expect-update"; readonly stream: number }
  | { readonly type: "exit" };

type ToParent =
  | { readonly type: "ready" }
  | { readonly type: "connected"; readonly slowestMs: number; readonly medianMs: number }
  | { readonly type: "armed" }
  | { readonly type: "changed" }
  | { readonly type: "updated"; readonly ms: number; readonly others: number }
  | { readonly type: "failed"; readonly error: string };

const shardOf = (stream: number): string => String(stream * SPREAD);

// --- the clients (child process) ---------------------------------------------------------------------------------

interface ClientStream {
  /** Responses seen so far. */
  responses: number;
  /** Resolves with the next response. */
  next(): Promise<void>;
  close(): void;
}

function openStream(address: string, protocol: Protocol, index: number): ClientStream {
  const { call, close } = openRawAdsCall(address, protocol);
  const locator = { name: NAME, dynamicParameters: { shard: shardOf(index) } };
  const node = { node: { id: `bench-client-${index}` } };
  // SotW: every request repeats the subscription; delta: the first one makes it.
  const request = (nonce: string): Buffer =>
    Buffer.from(
      protocol === "sotw"
        ? toBinary(
            DiscoveryRequestSchema,
            create(DiscoveryRequestSchema, {
              ...(nonce ? {} : node),
              typeUrl: CDS_TYPE_URL,
              responseNonce: nonce,
              resourceLocators: [locator],
            }),
          )
        : toBinary(
            DeltaDiscoveryRequestSchema,
            create(DeltaDiscoveryRequestSchema, {
              ...(nonce ? {} : { ...node, resourceLocatorsSubscribe: [locator] }),
              typeUrl: CDS_TYPE_URL,
              responseNonce: nonce,
            }),
          ),
    );
  const waiting: (() => void)[] = [];
  const stream: ClientStream = {
    responses: 0,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    close,
  };
  call.on("data", (bytes: Buffer) => {
    stream.responses++;
    call.write(request(scanResponse(bytes).nonce));
    waiting.shift()?.();
  });
  call.write(request(""));
  return stream;
}

function runChild(): void {
  let streams: ClientStream[] = [];
  serveServerProcess<ToChild, ToParent>(async (message, send) => {
    if (message.type === "connect") {
      const start = performance.now();
      streams = Array.from({ length: STREAMS }, (_, i) => openStream(message.address, message.protocol, i));
      const times = await Promise.all(streams.map((s) => s.next().then(() => performance.now() - start)));
      times.sort((a, b) => a - b);
      send({ type: "connected", slowestMs: times.at(-1) ?? 0, medianMs: times[times.length >> 1] ?? 0 });
    } else if (message.type === "expect-update") {
      const before = streams.map((s) => s.responses);
      const changedStream = message.stream;
      const changed = streams[changedStream] as ClientStream;
      const start = performance.now();
      const pending = changed.next().then(() => performance.now() - start);
      send({ type: "armed" });
      const ms = await pending;
      send({ type: "changed" });
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
      const others = streams.filter((s, i) => i !== changedStream && s.responses > (before[i] as number)).length;
      send({ type: "updated", ms, others });
    } else {
      for (const stream of streams) stream.close();
      setTimeout(() => process.exit(0), 100);
    }
  });
}

// --- the servers (server process) --------------------------------------------------------------------------------

interface ServerUnderTest {
  readonly address: string;
  /** Changes the variant `stream` holds. */
  update(stream: number): void;
  close(): Promise<void>;
}

const variant = (shard: number, marker = "") => buildCluster({ name: NAME, edsServiceName: `${shard}${marker}` });

async function startControlPlane(): Promise<ServerUnderTest> {
  const server = await createManagementServer({ historyLimit: 0 });
  server.setResources(
    Array.from({ length: VARIANTS }, (_, shard) => ({ resource: variant(shard), constraints: `shard=${shard}` })),
  );
  return {
    address: server.address,
    update: (stream) => {
      const shard = Number(shardOf(stream));
      server.setResource(variant(shard, "-v2"), { constraints: `shard=${shard}` });
    },
    close: () => server.close(),
  };
}

/** The floor: every variant's response pre-encoded, and a map from a stream's `shard` parameter to it. */
async function startBaseline(protocol: Protocol): Promise<ServerUnderTest> {
  const wrapped = (shard: number, version: string, marker = ""): Resource =>
    create(ResourceSchema, {
      resourceName: { name: NAME, dynamicParameterConstraints: toProto(value("shard", String(shard))) },
      version,
      resource: anyPack(ClusterSchema, variant(shard, marker)),
    });
  const encode = (resource: Resource, version: string): Buffer =>
    Buffer.from(
      protocol === "sotw"
        ? toBinary(
            DiscoveryResponseSchema,
            create(DiscoveryResponseSchema, {
              typeUrl: CDS_TYPE_URL,
              versionInfo: version,
              nonce: version,
              resources: [anyPack(ResourceSchema, resource)],
            }),
          )
        : toBinary(
            DeltaDiscoveryResponseSchema,
            create(DeltaDiscoveryResponseSchema, {
              typeUrl: CDS_TYPE_URL,
              systemVersionInfo: version,
              nonce: version,
              resources: [resource],
            }),
          ),
    );
  const responses = new Map<string, Buffer>();
  for (let shard = 0; shard < VARIANTS; shard++) responses.set(String(shard), encode(wrapped(shard, "1"), "1"));
  const subscribers = new Map<string, Set<RawServerCall>>();
  const server = await serveRawAds(protocol, (call) => {
    call.on("data", (request: AdsRequest) => {
      if (request.responseNonce !== "") return;
      const locators = "resourceLocators" in request ? request.resourceLocators : request.resourceLocatorsSubscribe;
      const shard = locators[0]?.dynamicParameters.shard;
      const response = shard === undefined ? undefined : responses.get(shard);
      if (shard === undefined || !response) return;
      const set = subscribers.get(shard) ?? new Set();
      subscribers.set(shard, set);
      set.add(call);
      call.write(response);
    });
  });
  return {
    address: server.address,
    update: (stream) => {
      const shard = shardOf(stream);
      const response = encode(wrapped(Number(shard), "2", "-v2"), "2");
      for (const call of subscribers.get(shard) ?? []) call.write(response);
    },
    close: () => server.close(),
  };
}

interface Measured extends ChangeCpuFigures {
  readonly setupMs: number;
  readonly initialMs: number;
  readonly initialMedianMs: number;
  readonly updateMs: number;
  readonly others: number;
  /** The median of the LATER_CHANGES changes after the first. */
  readonly laterUpdateMs: number;
  readonly laterOthers: number;
  readonly peakRss: number;
  readonly heapAfterGc: number;
}

async function runServer(kind: ServerKind, protocol: Protocol): Promise<void> {
  const clients = new ClientProcess<ToChild, ToParent>(fileURLToPath(import.meta.url), TIMEOUT_MS);
  await clients.next("ready");
  globalThis.gc?.();
  const setupStart = performance.now();
  const server = kind === "control-plane" ? await startControlPlane() : await startBaseline(protocol);
  const setupMs = performance.now() - setupStart;
  const { result, peakRss } = await withPeakRss(async () => {
    clients.send({ type: "connect", address: server.address, protocol });
    const connected = await clients.next("connected");
    // Let the ACKs land before the change.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const change = async (stream: number) => {
      clients.send({ type: "expect-update", stream });
      await clients.next("armed");
      const changed = clients.next("changed");
      const updated = clients.next("updated");
      // The window ends when the client has the change (its QUIET_MS wait comes after, outside it).
      const { cpuMs, mainMs } = await withChangeCpu(`${kind}-${protocol}-change-${stream}`, async () => {
        server.update(stream);
        await changed;
      });
      return { ...(await updated), cpuMs, mainMs };
    };
    const updated = await change(FIRST_CHANGED);
    const later: { ms: number; others: number; cpuMs: number; mainMs: number }[] = [];
    for (let i = 1; i <= LATER_CHANGES; i++) {
      // The client already waited QUIET_MS after the change before: every ACK has landed.
      await new Promise((resolve) => setTimeout(resolve, 100));
      later.push(await change(FIRST_CHANGED + i));
    }
    return { connected, updated, later };
  });
  globalThis.gc?.();
  const measured: Measured = {
    setupMs,
    initialMs: result.connected.slowestMs,
    initialMedianMs: result.connected.medianMs,
    updateMs: result.updated.ms,
    others: result.updated.others,
    laterUpdateMs: median(result.later.map((l) => l.ms)),
    laterOthers: result.later.reduce((sum, l) => sum + l.others, 0),
    updateCpuMs: result.updated.cpuMs,
    laterUpdateCpuMs: median(result.later.map((l) => l.cpuMs)),
    updateMainMs: result.updated.mainMs,
    laterUpdateMainMs: median(result.later.map((l) => l.mainMs)),
    peakRss,
    heapAfterGc: process.memoryUsage().heapUsed,
  };
  clients.send({ type: "exit" });
  await server.close();
  printResult(measured);
  process.exit(0);
}

function runProtocol(protocol: Protocol): void {
  const run = (kind: ServerKind) =>
    runInOwnProcess<Measured>(fileURLToPath(import.meta.url), ["--server", kind, protocol], TIMEOUT_MS * 3);
  const ours: Measured[] = [];
  const theirs: Measured[] = [];
  for (let i = 0; i < PAIRS; i++) {
    ours.push(run("control-plane"));
    theirs.push(run("baseline"));
  }
  const controlPlane = medianOfRuns(ours);
  const baseline = medianOfRuns(theirs);
  /** Stray responses are counted over every pair, not as a median: there should be none in any. */
  const strays = (runs: readonly Measured[]) => runs.reduce((sum, r) => sum + r.others + r.laterOthers, 0);
  const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
  const ms = (n: number): string => `${n < 10 ? n.toFixed(1) : int(n)} ms`;
  const cpu = (n: number): string => `${n < 10 ? n.toFixed(2) : int(n)} ms`;
  const row = (label: string, a: number, b: number, format: (n: number) => string): string[] => [
    label,
    format(a),
    format(b),
    ratio(a / b),
  ];
  printTable(
    `control plane variants, ${protocol === "sotw" ? "SotW" : "delta"}: 1 name in ${int(VARIANTS)} exact-value variants to ${int(STREAMS)} streams, each with its own parameters (server and clients in separate processes; medians of ${PAIRS} process pairs)`,
    ["step", "@xdskit/control-plane", "baseline: grpc-js, responses pre-encoded per variant", "ratio"],
    [
      row(`setup: publish the ${int(VARIANTS)} variants`, controlPlane.setupMs, baseline.setupMs, ms),
      row("every stream has its variant (slowest)", controlPlane.initialMs, baseline.initialMs, ms),
      row("  (median stream)", controlPlane.initialMedianMs, baseline.initialMedianMs, ms),
      row("1 variant changes: its stream has it", controlPlane.updateMs, baseline.updateMs, ms),
      row(`  (later changes, median of ${LATER_CHANGES})`, controlPlane.laterUpdateMs, baseline.laterUpdateMs, ms),
      ...changeCpuRows((label, a, b) => row(label, a, b, cpu), controlPlane, baseline),
      [
        `  other streams with a response within ${QUIET_MS} ms (all ${PAIRS} pairs)`,
        String(strays(ours)),
        String(strays(theirs)),
        "",
      ],
      row("server RSS peak", controlPlane.peakRss, baseline.peakRss, mb),
      row("server heap after a forced GC", controlPlane.heapAfterGc, baseline.heapAfterGc, mb),
    ],
  );
  const each = ours.map((r, i) => r.updateMs / theirs[i]!.updateMs);
  console.log(
    `1 variant changes, the first change in each pair (control plane / baseline): ${each.map((r) => ratio(r)).join(", ")}; median ${ratio(median(each))}\n`,
  );
}

const serverArg = process.argv.indexOf("--server");
if (process.argv.includes("--child")) runChild();
else if (serverArg > 0) {
  const [kind, protocol] = process.argv.slice(serverArg + 1);
  await runServer(kind === "baseline" ? "baseline" : "control-plane", protocol === "delta" ? "delta" : "sotw");
} else {
  const asked = process.argv.slice(2).filter((a): a is Protocol => a === "sotw" || a === "delta");
  for (const protocol of asked.length > 0 ? asked : (["sotw", "delta"] as const)) runProtocol(protocol);
}
