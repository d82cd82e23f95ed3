// One change written to etcd reaching 10,000 downstream streams through 2 replicas and 4 relays, against the same
// change made through the replicas' API, on the same tier in the same run.
//
// Tier: etcd (Debian's, tools/test-etcd); 2 replicas (@xdskit/control-plane fed by @xdskit/etcd-source, a process
// each) holding 10,000 clusters; 4 relays (@xdskit/xds-relay, a process each) whose upstream is both replicas in one
// server_uri (two relays list one replica first, two the other); 10,000 delta streams (one process, 100 per HTTP/2
// connection) of 100 clusters each, spread over the relays, every stream subscribed to cluster-0.
// Changes alternate: cluster-0 written to etcd (one put, one revision), and cluster-0 set on both replicas through
// their API (`setResource`, what a control plane without etcd does). Each sample is the time from the write (the
// orchestrator's clock, shared by every process of the machine) to the response of the last of the 10,000 streams.
// Not a test: nothing asserts on time.
//
//   node tools/bench/dist/etcd-propagation.js [--streams 10000] [--changes 20] [--quick]
import { fileURLToPath } from "node:url";
import { toBinary } from "@bufbuild/protobuf";
import { CDS_TYPE_URL } from "@xdskit/control-plane";
import { applyEtcdChange, connectEtcd, planEtcdChange, resourceKey } from "@xdskit/etcd-source";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { startEtcd } from "@xdskit/test-etcd";
import { createXdsRelay, type XdsRelay } from "@xdskit/xds-relay";
import { clusterOf, runReplica } from "./lib/etcd-replica.js";
import { connect, type H2Connection, type SubscribedStream, subscribe } from "./lib/h2-ads.js";
import { type Message, now, numberOption, Peer, quantile, roleOf, serve } from "./lib/peer-process.js";
import { int, printTable, ratio } from "./lib/table.js";

const FILE = fileURLToPath(import.meta.url);
const CLUSTERS = 10_000;
const PER_STREAM = 100;
const STREAMS_PER_CONNECTION = 100;

function runRelay(): void {
  let relay: XdsRelay | undefined;
  serve(async (message, send) => {
    if (message.type === "start") {
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
    } else if (message.type === "stats") {
      send({ type: "stats", rss: process.memoryUsage.rss() });
    }
  });
}

/** The clusters of a stream: cluster-0 and a window of 99, so every 100 consecutive streams cover them all. */
function windowOf(index: number): string[] {
  const window = index % 100;
  const names = ["cluster-0"];
  for (let i = 1; i < PER_STREAM; i++) names.push(`cluster-${1 + window * (PER_STREAM - 1) + i - 1}`);
  return names;
}

function runClients(): void {
  const streams: SubscribedStream[] = [];
  const connections: H2Connection[] = [];
  let armed: Promise<number[]> | undefined;
  serve(async (message: Message, send) => {
    if (message.type === "connect") {
      const targets = message.targets as string[];
      const byTarget = targets.map(() => [] as H2Connection[]);
      const reached: Promise<number>[] = [];
      for (let i = 0; i < (message.streams as number); i++) {
        const t = i % targets.length;
        const perTarget = Math.floor(i / targets.length);
        if (perTarget % STREAMS_PER_CONNECTION === 0) {
          const connection = connect(targets[t]!);
          byTarget[t]!.push(connection);
          connections.push(connection);
        }
        const names = windowOf(perTarget);
        const stream = subscribe(byTarget[t]!.at(-1)!, "delta", CDS_TYPE_URL, names, `client-${i}`);
        reached.push(stream.until((_, total) => total >= names.length));
        streams.push(stream);
      }
      await Promise.all(reached);
      send({ type: "connected" });
    } else if (message.type === "arm") {
      armed = Promise.all(streams.map((s) => s.until((resources) => resources > 0)));
      send({ type: "armed" });
    } else if (message.type === "await") {
      const times = await (armed as Promise<number[]>);
      send({ type: "updated", last: Math.max(...times) });
    } else if (message.type === "close") {
      for (const stream of streams) stream.close();
      for (const connection of connections) connection.close();
      send({ type: "closed" });
    }
  });
}

async function runTop(): Promise<void> {
  const quick = process.argv.includes("--quick");
  const streams = numberOption("streams", quick ? 1000 : 10_000);
  const changes = numberOption("changes", quick ? 6 : 20);
  const etcd = await startEtcd();
  const conn = connectEtcd({ endpoints: [etcd.endpoint] });
  const peers: Peer[] = [];
  try {
    const plan = await planEtcdChange({
      etcd: conn,
      resources: Array.from({ length: CLUSTERS }, (_, i) => ({ resource: clusterOf(i, 0) })),
    });
    await applyEtcdChange(conn, plan);
    const replicas = [new Peer(FILE, "replica"), new Peer(FILE, "replica")];
    peers.push(...replicas);
    const addresses = await Promise.all(
      replicas.map(
        async (r) =>
          (await r.ask<Message & { address: string }>({ type: "start", etcd: etcd.endpoint }, "ready")).address,
      ),
    );
    const relays = Array.from({ length: 4 }, () => new Peer(FILE, "relay"));
    peers.push(...relays);
    const relayAddresses = await Promise.all(
      relays.map(async (relay, index) => {
        const order = index % 2 === 0 ? addresses : [...addresses].reverse();
        const upstream = `ipv4:${order.join(",")}`;
        return (await relay.ask<Message & { address: string }>({ type: "start", upstream, index }, "ready")).address;
      }),
    );
    const clients = new Peer(FILE, "clients");
    peers.push(clients);
    const filled = now();
    await clients.ask({ type: "connect", targets: relayAddresses, streams }, "connected");
    const fillMs = now() - filled;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const key = Buffer.from(resourceKey("/xds", { typeUrl: CDS_TYPE_URL, name: "cluster-0" }));
    const viaEtcd: number[] = [];
    const viaApi: number[] = [];
    for (let version = 1; version <= changes * 2; version++) {
      await clients.ask({ type: "arm" }, "armed");
      const at = now();
      if (version % 2 === 1) await conn.put(key, toBinary(ClusterSchema, clusterOf(0, version)));
      else for (const replica of replicas) replica.send({ type: "change", version });
      const { last } = await clients.ask<Message & { last: number }>({ type: "await" }, "updated");
      (version % 2 === 1 ? viaEtcd : viaApi).push(last - at);
    }
    const rss = await Promise.all(replicas.map((r) => r.ask<Message & { rss: number }>({ type: "stats" }, "stats")));
    const ms = (value: number) => `${value < 10 ? value.toFixed(1) : int(value)} ms`;
    printTable(
      `etcd to ${int(streams)} streams: ${int(streams)} delta streams x ${PER_STREAM} clusters, 2 replicas (etcd-fed, ${int(CLUSTERS)} clusters), 4 relays, etcd; ${changes} changes each way, alternating; time from the write to the last stream's response (first fill of every stream: ${int(fillMs)} ms; replica RSS ${rss.map((r) => `${(r.rss / 1048576).toFixed(0)} MB`).join(", ")})`,
      ["", "written to etcd", "set through the replicas' API", "ratio (goal <= 1.2x)"],
      [
        [
          "p50",
          ms(quantile(viaEtcd, 0.5)),
          ms(quantile(viaApi, 0.5)),
          ratio(quantile(viaEtcd, 0.5) / quantile(viaApi, 0.5)),
        ],
        [
          "p99",
          ms(quantile(viaEtcd, 0.99)),
          ms(quantile(viaApi, 0.99)),
          ratio(quantile(viaEtcd, 0.99) / quantile(viaApi, 0.99)),
        ],
        ["min", ms(Math.min(...viaEtcd)), ms(Math.min(...viaApi)), ratio(Math.min(...viaEtcd) / Math.min(...viaApi))],
      ],
    );
    await clients.ask({ type: "close" }, "closed");
  } finally {
    for (const peer of peers) peer.kill();
    conn.close();
    await etcd.close();
  }
}

const role = roleOf();
if (role === "replica") runReplica();
else if (role === "relay") runRelay();
else if (role === "clients") runClients();
else await runTop();
