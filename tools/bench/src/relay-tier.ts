// @xdskit/xds-relay as a tier: one control plane with 10,000 clusters, relays (each a process of its own) fed by it,
// and many downstream ADS streams spread over the relays, against the same streams on the control plane directly.
//
// Tier (delta downstream by default; `--sotw`): each stream subscribes by name to 100 clusters, a window of 99 plus
// cluster-0 (the windows of any 100 consecutive streams of one server cover the 10,000 clusters, so each relay with
// 100 streams or more holds them all). Steps: (1) start the control plane, then the relays, then the clients (one process; streams share
// HTTP/2 connections, 100 per connection); (2) time until every stream has its 100 clusters; (3) cluster-0 changes:
// time from the change until every stream has it (every stream subscribes to it); (4) what the control plane
// served: its streams, and (relay mode) the bytes of every response it sent; (5) each relay's heap after a GC with
// its streams and cache, then with its streams closed (the cache retained), and idle before anything: the cost of a
// cached resource and of a downstream stream; (6) the same clients against the control plane directly.
//
// Hops: one stream to the control plane, one through a relay, one through two relays in a chain, each subscribed to
// one cluster; it changes 100 times, one change at a time; the latency of each path is from the change (in the
// control plane's process) to the response (in the clients' process), on one machine's clock. The added latency
// per hop is the difference of medians. Not a test: nothing asserts on time.
//
//   node tools/bench/dist/relay-tier.js [--streams 10000] [--relays 4] [--sotw] [--quick]
import { fileURLToPath } from "node:url";
import { toBinary } from "@bufbuild/protobuf";
import { buildCluster, CDS_TYPE_URL, createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import {
  DeltaDiscoveryResponseSchema,
  DiscoveryResponseSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { createXdsRelay, type XdsRelay } from "@xdskit/xds-relay";
import { connect, type H2Connection, type SubscribedStream, subscribe } from "./lib/h2-ads.js";
import { heapAfterGc, type Message, now, Peer, serve } from "./lib/peer-process.js";
import type { Protocol } from "./lib/raw-ads.js";
import { int, printTable, ratio } from "./lib/table.js";

const CLUSTERS = 10_000;
const PER_STREAM = 100;
const STREAMS_PER_CONNECTION = 100;
const HOP_CHANGES = 100;
const TIMEOUT_MS = 600_000;
const SELF = fileURLToPath(import.meta.url);

// --- the control plane ---------------------------------------------------------------------------------------------

const clusterOf = (i: number, version: number) =>
  buildCluster({ name: `cluster-${i}`, edsServiceName: version === 0 ? "" : `cluster-${i}-v${version}` });

function runControlPlane(): void {
  let server: ManagementServer | undefined;
  let bytes = 0;
  let responses = 0;
  let version = 0;
  serve(async (message, send) => {
    if (message.type === "start") {
      server = await createManagementServer({ historyLimit: 0 });
      server.setResources(Array.from({ length: message.clusters as number }, (_, i) => clusterOf(i, 0)));
      if (message.countBytes) {
        server.hooks.on("response", (event) => {
          responses++;
          bytes +=
            event.kind === "sotw"
              ? toBinary(DiscoveryResponseSchema, event.response).length
              : toBinary(DeltaDiscoveryResponseSchema, event.response).length;
        });
      }
      send({ type: "ready", address: server.address });
    } else if (message.type === "change") {
      version++;
      const at = now();
      server?.setResource(clusterOf(0, version));
      send({ type: "changed", at });
    } else if (message.type === "stats") {
      send({
        type: "stats",
        streams: server?.streams().length ?? 0,
        bytes,
        responses,
        rss: process.memoryUsage.rss(),
        heap: heapAfterGc(),
      });
    }
  });
}

// --- a relay -------------------------------------------------------------------------------------------------------

function runRelay(): void {
  let relay: XdsRelay | undefined;
  serve(async (message, send) => {
    if (message.type === "start") {
      const idle = heapAfterGc();
      relay = await createXdsRelay({
        historyLimit: 0,
        retainUnusedMs: TIMEOUT_MS,
        upstream: {
          bootstrap: {
            xds_servers: [
              { server_uri: message.upstream as string, channel_creds: [{ type: "insecure" }], api_type: "DELTA_GRPC" },
            ],
            node: { id: `relay-${String(message.index)}` },
          },
          env: {},
        },
      });
      send({ type: "ready", address: relay.address, idleHeap: idle });
    } else if (message.type === "stats") {
      send({ type: "stats", heap: heapAfterGc(), rss: process.memoryUsage.rss(), ...relay?.stats() });
    }
  });
}

// --- the clients ---------------------------------------------------------------------------------------------------

/** The clusters of the `index`th stream of its server: every 100 consecutive streams of a server cover them all. */
function windowOf(index: number): string[] {
  const window = index % 100;
  const names = ["cluster-0"];
  for (let i = 1; i < PER_STREAM; i++) names.push(`cluster-${1 + window * (PER_STREAM - 1) + i - 1}`);
  return names;
}

function runClients(): void {
  let connections: H2Connection[] = [];
  let streams: SubscribedStream[] = [];
  let armed: Promise<number[]> | undefined;
  serve(async (message, send) => {
    if (message.type === "connect") {
      const targets = message.targets as string[];
      const protocol = message.protocol as Protocol;
      const count = message.streams as number;
      const byTarget = targets.map(() => [] as H2Connection[]);
      const start = now();
      const reached: Promise<number>[] = [];
      for (let i = 0; i < count; i++) {
        const t = i % targets.length;
        const perTarget = Math.floor(i / targets.length);
        if (perTarget % STREAMS_PER_CONNECTION === 0) {
          const connection = connect(targets[t] as string);
          byTarget[t]!.push(connection);
          connections.push(connection);
        }
        const names = message.hop ? ["cluster-0"] : windowOf(perTarget);
        const stream = subscribe(byTarget[t]!.at(-1)!, protocol, CDS_TYPE_URL, names, `client-${i}`);
        reached.push(stream.until((_, total) => total >= names.length));
        streams.push(stream);
      }
      const times = (await Promise.all(reached)).map((t) => t - start).sort((a, b) => a - b);
      send({ type: "connected", slowestMs: times.at(-1) ?? 0, medianMs: times[times.length >> 1] ?? 0 });
    } else if (message.type === "arm") {
      // The next response of every stream carrying cluster-0 (SotW: the window again, with it).
      armed = Promise.all(streams.map((s) => s.until((resources) => resources > 0)));
      send({ type: "armed" });
    } else if (message.type === "await") {
      send({ type: "updated", times: await (armed as Promise<number[]>) });
    } else if (message.type === "close") {
      for (const stream of streams) stream.close();
      for (const connection of connections) connection.close();
      streams = [];
      connections = [];
      send({ type: "closed" });
    }
  });
}

// --- the orchestration ---------------------------------------------------------------------------------------------

interface TierResult {
  readonly initialMs: number;
  readonly initialMedianMs: number;
  readonly changeMs: number;
  readonly changeMedianMs: number;
  readonly upstreamStreams: number;
  readonly upstreamBytes: number;
  readonly upstreamResponses: number;
  readonly controlPlaneRss: number;
  readonly relays: readonly {
    readonly idleHeap: number;
    readonly servingHeap: number;
    readonly cacheOnlyHeap: number;
    readonly rss: number;
    readonly cachedEntries: number;
    readonly streams: number;
  }[];
}

async function runTier(relayCount: number, streams: number, protocol: Protocol): Promise<TierResult> {
  const cp = new Peer(SELF, "cp");
  const relays = Array.from({ length: relayCount }, () => new Peer(SELF, "relay"));
  const clients = new Peer(SELF, "clients");
  try {
    const { address } = await cp.ask<{ type: string; address: string }>(
      { type: "start", clusters: CLUSTERS, countBytes: relayCount > 0 },
      "ready",
    );
    const started = await Promise.all(
      relays.map((relay, index) =>
        relay.ask<{ type: string; address: string; idleHeap: number }>(
          { type: "start", upstream: address, index },
          "ready",
        ),
      ),
    );
    const targets = relayCount > 0 ? started.map((s) => s.address) : [address];
    const connected = await clients.ask<{ type: string; slowestMs: number; medianMs: number }>(
      { type: "connect", targets, streams, protocol },
      "connected",
    );
    // Let the last ACKs land.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await clients.ask({ type: "arm" }, "armed");
    const { at } = await cp.ask<{ type: string; at: number }>({ type: "change" }, "changed");
    const { times } = await clients.ask<{ type: string; times: number[] }>({ type: "await" }, "updated");
    const sorted = times.map((t) => t - at).sort((a, b) => a - b);
    const cpStats = await cp.ask<{ type: string; streams: number; bytes: number; responses: number; rss: number }>(
      { type: "stats" },
      "stats",
    );
    const serving = await Promise.all(
      relays.map((r) => r.ask<Record<string, number> & Message>({ type: "stats" }, "stats")),
    );
    await clients.ask({ type: "close" }, "closed");
    // The relays see every stream close; what they then hold is their cache.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const cacheOnly = await Promise.all(
      relays.map((r) => r.ask<Record<string, number> & Message>({ type: "stats" }, "stats")),
    );
    return {
      initialMs: connected.slowestMs,
      initialMedianMs: connected.medianMs,
      changeMs: sorted.at(-1) ?? 0,
      changeMedianMs: sorted[sorted.length >> 1] ?? 0,
      upstreamStreams: cpStats.streams,
      upstreamBytes: cpStats.bytes,
      upstreamResponses: cpStats.responses,
      controlPlaneRss: cpStats.rss,
      relays: started.map((s, i) => ({
        idleHeap: s.idleHeap,
        servingHeap: serving[i]!.heap!,
        cacheOnlyHeap: cacheOnly[i]!.heap!,
        rss: serving[i]!.rss!,
        cachedEntries: serving[i]!.cachedEntries!,
        streams: serving[i]!.streams!,
      })),
    };
  } finally {
    for (const peer of [clients, ...relays, cp]) peer.kill();
  }
}

/** Medians and 90th percentiles of the change latency on three paths: direct, one relay, two relays. */
async function runHops(protocol: Protocol): Promise<{ p50: number[]; p90: number[] }> {
  const cp = new Peer(SELF, "cp");
  const relay1 = new Peer(SELF, "relay");
  const relay2 = new Peer(SELF, "relay");
  const clients = new Peer(SELF, "clients");
  try {
    const { address } = await cp.ask<{ type: string; address: string }>({ type: "start", clusters: 1 }, "ready");
    const r1 = await relay1.ask<{ type: string; address: string }>(
      { type: "start", upstream: address, index: 1 },
      "ready",
    );
    const r2 = await relay2.ask<{ type: string; address: string }>(
      { type: "start", upstream: r1.address, index: 2 },
      "ready",
    );
    await clients.ask(
      { type: "connect", targets: [address, r1.address, r2.address], streams: 3, protocol, hop: true },
      "connected",
    );
    const latencies: number[][] = [[], [], []];
    for (let i = 0; i < HOP_CHANGES; i++) {
      await clients.ask({ type: "arm" }, "armed");
      const { at } = await cp.ask<{ type: string; at: number }>({ type: "change" }, "changed");
      const { times } = await clients.ask<{ type: string; times: number[] }>({ type: "await" }, "updated");
      times.forEach((t, path) => {
        latencies[path]!.push(t - at);
      });
    }
    const pick = (q: number) => latencies.map((l) => [...l].sort((a, b) => a - b)[Math.floor(l.length * q)] ?? 0);
    return { p50: pick(0.5), p90: pick(0.9) };
  } finally {
    for (const peer of [clients, relay2, relay1, cp]) peer.kill();
  }
}

async function runTop(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: number): number => {
    const at = args.indexOf(`--${name}`);
    return at >= 0 ? Number(args[at + 1]) : fallback;
  };
  const quick = args.includes("--quick");
  const streams = option("streams", quick ? 1000 : 10_000);
  const relayCount = option("relays", quick ? 2 : 4);
  const protocol: Protocol = args.includes("--sotw") ? "sotw" : "delta";
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  const ms = (value: number) => `${value < 10 ? value.toFixed(1) : int(value)} ms`;
  const label = `${int(streams)} ${protocol === "sotw" ? "SotW" : "delta"} streams x ${PER_STREAM} clusters each`;

  const tier = await runTier(relayCount, streams, protocol);
  const direct = await runTier(0, streams, protocol);
  printTable(
    `relay tier: ${label}, one control plane with ${int(CLUSTERS)} clusters, ${relayCount} relays (each a process) against the control plane serving the same streams (one process each; 2-core machine shared)`,
    ["", `through ${relayCount} relays`, "control plane directly", "ratio"],
    [
      [
        "every stream has its 100 clusters (slowest)",
        ms(tier.initialMs),
        ms(direct.initialMs),
        ratio(tier.initialMs / direct.initialMs),
      ],
      [
        "  (median stream)",
        ms(tier.initialMedianMs),
        ms(direct.initialMedianMs),
        ratio(tier.initialMedianMs / direct.initialMedianMs),
      ],
      [
        "cluster-0 changes: every stream has it (slowest)",
        ms(tier.changeMs),
        ms(direct.changeMs),
        ratio(tier.changeMs / direct.changeMs),
      ],
      [
        "  (median stream)",
        ms(tier.changeMedianMs),
        ms(direct.changeMedianMs),
        ratio(tier.changeMedianMs / direct.changeMedianMs),
      ],
      ["streams on the control plane", int(tier.upstreamStreams), int(direct.upstreamStreams), ""],
      [
        "control plane RSS",
        mb(tier.controlPlaneRss),
        mb(direct.controlPlaneRss),
        ratio(tier.controlPlaneRss / direct.controlPlaneRss),
      ],
    ],
  );
  const relayRows = tier.relays.map((r, i) => {
    const perEntry = (r.cacheOnlyHeap - r.idleHeap) / Math.max(1, r.cachedEntries);
    const perStream = (r.servingHeap - r.cacheOnlyHeap) / Math.max(1, r.streams);
    return [
      `relay ${i + 1}`,
      int(r.streams),
      int(r.cachedEntries),
      mb(r.rss),
      `${(perEntry / 1024).toFixed(2)} KB`,
      `${(perStream / 1024).toFixed(2)} KB`,
    ];
  });
  printTable(
    `the relays: upstream, ${int(tier.upstreamStreams)} streams received ${int(tier.upstreamResponses)} responses, ${mb(tier.upstreamBytes)} (every cluster once per relay); heap after GC, per cached cluster (cache retained, streams closed, minus idle) and per downstream stream of ${PER_STREAM} subscriptions (serving minus cache only)`,
    ["", "downstream streams", "cached clusters", "RSS serving", "heap per cached cluster", "heap per stream"],
    relayRows,
  );
  const hops = await runHops(protocol);
  printTable(
    `hop latency: one cluster changes ${HOP_CHANGES} times; from the change in the control plane to the response at the client (${protocol})`,
    ["path", "p50", "p90", "added per hop (p50)"],
    [
      ["control plane directly", ms(hops.p50[0]!), ms(hops.p90[0]!), ""],
      ["through one relay", ms(hops.p50[1]!), ms(hops.p90[1]!), ms(hops.p50[1]! - hops.p50[0]!)],
      ["through two relays", ms(hops.p50[2]!), ms(hops.p90[2]!), ms(hops.p50[2]! - hops.p50[1]!)],
    ],
  );
}

const roleAt = process.argv.indexOf("--role");
const role = roleAt > 0 ? process.argv[roleAt + 1] : undefined;
if (role === "cp") runControlPlane();
else if (role === "relay") runRelay();
else if (role === "clients") runClients();
else await runTop();
