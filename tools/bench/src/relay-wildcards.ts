// Wildcard subscribers through a relay tier (issue 33): one control plane with 10,000 clusters, relays (each a
// process of its own) fed by it, and downstream streams each subscribed to CDS by wildcard, spread over the relays.
//
// Steps, for each run: (1) start the control plane, then the relays, then the clients (one process; streams share
// HTTP/2 connections, 100 per connection); (2) time until every stream has every cluster; (3) cluster-0 changes: time
// from the change until every stream has it, five times (after a GC in every process, so that a change is timed and
// not the collection of what the fill left), the median reported; (4) what the control plane sent the relays:
// responses and bytes, for the fill and per change. Runs: 1,000 wildcard streams, 250 wildcard streams (the upstream bytes must not depend on the
// number of subscribers), and 1,000 streams subscribing by name to 100 clusters each (cluster-0 among them), the
// relay-tier's shape, whose change time is the one to compare with. Delta by default (`--sotw`: state of the world,
// where each change resends a wildcard subscriber every cluster). Not a test: nothing asserts on time.
//
//   node tools/bench/dist/relay-wildcards.js [--streams 1000] [--relays 4] [--sotw] [--quick]
import { fileURLToPath } from "node:url";
import { toBinary } from "@bufbuild/protobuf";
import { buildCluster, CDS_TYPE_URL, createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import {
  DeltaDiscoveryResponseSchema,
  DiscoveryResponseSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { createXdsRelay, type XdsRelay } from "@xdskit/xds-relay";
import { connect, type H2Connection, type SubscribedStream, subscribe } from "./lib/h2-ads.js";
import { heapAfterGc, now, Peer, serve } from "./lib/peer-process.js";
import type { Protocol } from "./lib/raw-ads.js";
import { int, printTable, ratio } from "./lib/table.js";

const CLUSTERS = 10_000;
const PER_NAMED_STREAM = 100;
const STREAMS_PER_CONNECTION = 100;
/** Changes timed one after another; the median is reported. */
const CHANGES = 5;
const SELF = fileURLToPath(import.meta.url);

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
      server.setResources(Array.from({ length: CLUSTERS }, (_, i) => clusterOf(i, 0)));
      server.hooks.on("response", (event) => {
        responses++;
        bytes +=
          event.kind === "sotw"
            ? toBinary(DiscoveryResponseSchema, event.response).length
            : toBinary(DeltaDiscoveryResponseSchema, event.response).length;
      });
      send({ type: "ready", address: server.address });
    } else if (message.type === "change") {
      version++;
      const at = now();
      server?.setResource(clusterOf(0, version));
      send({ type: "changed", at });
    } else if (message.type === "stats") {
      send({ type: "stats", streams: server?.streams().length ?? 0, bytes, responses });
    }
  });
}

function runRelay(): void {
  let relay: XdsRelay | undefined;
  serve(async (message, send) => {
    if (message.type === "gc") {
      heapAfterGc();
      send({ type: "collected" });
    } else if (message.type === "start") {
      relay = await createXdsRelay({
        historyLimit: 0,
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
      send({ type: "ready", address: relay.address });
    }
  });
}

/** The clusters of the `index`th named stream of its relay: a window of 99, plus cluster-0. */
function windowOf(index: number): string[] {
  const window = index % 100;
  const names = ["cluster-0"];
  for (let i = 1; i < PER_NAMED_STREAM; i++) names.push(`cluster-${1 + window * (PER_NAMED_STREAM - 1) + i - 1}`);
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
      const wildcard = message.wildcard as boolean;
      const byTarget = targets.map(() => [] as H2Connection[]);
      const start = now();
      const reached: Promise<number>[] = [];
      for (let i = 0; i < count; i++) {
        const t = i % targets.length;
        const perTarget = Math.floor(i / targets.length);
        if (perTarget % STREAMS_PER_CONNECTION === 0) {
          const connection = connect(targets[t] as string);
          byTarget[t]?.push(connection);
          connections.push(connection);
        }
        const names = wildcard ? ["*"] : windowOf(perTarget);
        const expected = wildcard ? CLUSTERS : names.length;
        const stream = subscribe(byTarget[t]?.at(-1) as H2Connection, protocol, CDS_TYPE_URL, names, `client-${i}`);
        reached.push(stream.until((_, total) => total >= expected));
        streams.push(stream);
      }
      const times = (await Promise.all(reached)).map((t) => t - start).sort((a, b) => a - b);
      send({ type: "connected", slowestMs: times.at(-1) ?? 0 });
    } else if (message.type === "gc") {
      heapAfterGc();
      send({ type: "collected" });
    } else if (message.type === "arm") {
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

interface RunResult {
  readonly fillMs: number;
  readonly changeMs: number;
  readonly changeMedianMs: number;
  readonly upstreamStreams: number;
  readonly fillBytes: number;
  readonly fillResponses: number;
  readonly changeBytes: number;
  readonly changeResponses: number;
}

async function run(relayCount: number, streams: number, protocol: Protocol, wildcard: boolean): Promise<RunResult> {
  const cp = new Peer(SELF, "cp");
  const relays = Array.from({ length: relayCount }, () => new Peer(SELF, "relay"));
  const clients = new Peer(SELF, "clients");
  type Stats = { type: string; streams: number; bytes: number; responses: number };
  try {
    const { address } = await cp.ask<{ type: string; address: string }>({ type: "start" }, "ready");
    const started = await Promise.all(
      relays.map((relay, index) =>
        relay.ask<{ type: string; address: string }>({ type: "start", upstream: address, index }, "ready"),
      ),
    );
    const connected = await clients.ask<{ type: string; slowestMs: number }>(
      { type: "connect", targets: started.map((s) => s.address), streams, protocol, wildcard },
      "connected",
    );
    // Let the last ACKs land, and what the fill left behind be collected (in every process) before any change: a
    // change is timed, not the collection of the fill's garbage.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await Promise.all([...relays, clients].map((peer) => peer.ask({ type: "gc" }, "collected")));
    const filled = await cp.ask<Stats>({ type: "stats" }, "stats");
    const slowest: number[] = [];
    const medians: number[] = [];
    for (let i = 0; i < CHANGES; i++) {
      await clients.ask({ type: "arm" }, "armed");
      const { at } = await cp.ask<{ type: string; at: number }>({ type: "change" }, "changed");
      const { times } = await clients.ask<{ type: string; times: number[] }>({ type: "await" }, "updated");
      const sorted = times.map((t) => t - at).sort((a, b) => a - b);
      slowest.push(sorted.at(-1) ?? 0);
      medians.push(sorted[sorted.length >> 1] ?? 0);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const changed = await cp.ask<Stats>({ type: "stats" }, "stats");
    await clients.ask({ type: "close" }, "closed");
    const median = (list: number[]) => [...list].sort((a, b) => a - b)[list.length >> 1] ?? 0;
    return {
      fillMs: connected.slowestMs,
      changeMs: median(slowest),
      changeMedianMs: median(medians),
      upstreamStreams: filled.streams,
      fillBytes: filled.bytes,
      fillResponses: filled.responses,
      changeBytes: (changed.bytes - filled.bytes) / CHANGES,
      changeResponses: (changed.responses - filled.responses) / CHANGES,
    };
  } finally {
    for (const peer of [clients, ...relays, cp]) peer.kill();
  }
}

async function runTop(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: number): number => {
    const at = args.indexOf(`--${name}`);
    return at >= 0 ? Number(args[at + 1]) : fallback;
  };
  const quick = args.includes("--quick");
  const streams = option("streams", quick ? 200 : 1000);
  const relayCount = option("relays", quick ? 2 : 4);
  const protocol: Protocol = args.includes("--sotw") ? "sotw" : "delta";
  const fewer = Math.max(relayCount, Math.floor(streams / 4));
  const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;
  const ms = (value: number) => `${value < 10 ? value.toFixed(1) : int(value)} ms`;

  const wildcard = await run(relayCount, streams, protocol, true);
  const fewerWildcard = await run(relayCount, fewer, protocol, true);
  const named = await run(relayCount, streams, protocol, false);
  const kind = protocol === "sotw" ? "SotW" : "delta";
  printTable(
    `wildcard subscribers through ${relayCount} relays (each a process): ${kind} streams each subscribed to CDS by wildcard, one control plane with ${int(CLUSTERS)} clusters; against the same number of streams subscribed by name to ${PER_NAMED_STREAM} clusters each (cluster-0 among them); 2-core machine shared`,
    [
      "",
      `${int(streams)} wildcard`,
      `${int(fewer)} wildcard`,
      `${int(streams)} named (${PER_NAMED_STREAM} each)`,
      "wildcard / named",
    ],
    [
      [
        "every stream has all it subscribed to (slowest)",
        ms(wildcard.fillMs),
        ms(fewerWildcard.fillMs),
        ms(named.fillMs),
        "",
      ],
      [
        `cluster-0 changes: the last stream has it (median of ${CHANGES})`,
        ms(wildcard.changeMs),
        ms(fewerWildcard.changeMs),
        ms(named.changeMs),
        ratio(wildcard.changeMs / named.changeMs),
      ],
      [
        "  (median stream)",
        ms(wildcard.changeMedianMs),
        ms(fewerWildcard.changeMedianMs),
        ms(named.changeMedianMs),
        ratio(wildcard.changeMedianMs / named.changeMedianMs),
      ],
      [
        "streams on the control plane",
        int(wildcard.upstreamStreams),
        int(fewerWildcard.upstreamStreams),
        int(named.upstreamStreams),
        "",
      ],
      [
        "upstream bytes, the fill (responses)",
        `${mb(wildcard.fillBytes)} (${int(wildcard.fillResponses)})`,
        `${mb(fewerWildcard.fillBytes)} (${int(fewerWildcard.fillResponses)})`,
        `${mb(named.fillBytes)} (${int(named.fillResponses)})`,
        "",
      ],
      [
        "upstream bytes, one change (responses)",
        `${int(wildcard.changeBytes)} B (${int(wildcard.changeResponses)})`,
        `${int(fewerWildcard.changeBytes)} B (${int(fewerWildcard.changeResponses)})`,
        `${int(named.changeBytes)} B (${int(named.changeResponses)})`,
        "",
      ],
    ],
  );
}

const roleAt = process.argv.indexOf("--role");
const role = roleAt > 0 ? process.argv[roleAt + 1] : undefined;
if (role === "cp") runControlPlane();
else if (role === "relay") runRelay();
else if (role === "clients") runClients();
else await runTop();
