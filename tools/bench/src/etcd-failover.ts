// Failover between replicas: the time from a replica's death (SIGKILL) to its clients being served by another, for
// @xdskit/xds-client (state of the world and delta) and @grpc/grpc-js-xds, whose bootstrap names both replicas in one
// server_uri (`ipv4:a,b`; docs/decisions.md#replicas-in-a-bootstrap).
//
// etcd holds a listener → route → cluster → endpoints chain; 2 replicas (etcd-fed, a process each); each client in a
// process of its own watching the chain. A round kills the replica the clients use and times, for each client, the
// first ADS request the other replica gets from it (its stream there is open and subscribed: from then on it is
// served); the killed replica then starts again on its port. Not a test: nothing asserts on time.
//
//   node tools/bench/dist/etcd-failover.js [--rounds 10] [--quick]
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as grpcJsXds from "@grpc/grpc-js-xds";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
} from "@xdskit/control-plane";
import { applyEtcdChange, connectEtcd, planEtcdChange } from "@xdskit/etcd-source";
import { startEtcd } from "@xdskit/test-etcd";
import {
  clusterResourceType,
  createXdsClient,
  endpointResourceType,
  listenerResourceType,
  routeConfigurationResourceType,
} from "@xdskit/xds-client";
import { runReplica } from "./lib/etcd-replica.js";
import { type Message, now, numberOption, Peer, quantile, roleOf, serve } from "./lib/peer-process.js";
import { printTable } from "./lib/table.js";

const FILE = fileURLToPath(import.meta.url);
const CLIENTS = ["xdskit-sotw", "xdskit-delta", "grpc-js-xds"] as const;
const LOCALITY = { region: "bench", zone: "a" };

function runClient(): void {
  serve(async (message, send) => {
    if (message.type !== "start") return;
    const uri = message.uri as string;
    const node = message.node as string;
    if (node === "grpc-js-xds") {
      grpcJsXds.register();
      const channel = new grpc.Client("xds:///echo.test", grpc.credentials.createInsecure(), {
        "grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config": JSON.stringify({
          xds_servers: [{ server_uri: uri, channel_creds: [{ type: "insecure" }] }],
          node: { id: node, cluster: "bench", locality: LOCALITY },
        }),
      });
      channel.getChannel().getConnectivityState(true);
      send({ type: "started" });
      return;
    }
    const client = createXdsClient({
      bootstrap: {
        xds_servers: [
          {
            server_uri: uri,
            channel_creds: [{ type: "insecure" }],
            ...(node === "xdskit-delta" ? { api_type: "DELTA_GRPC" as const } : {}),
          },
        ],
        node: { id: node },
      },
      env: {},
    });
    const watcher = { onResourceChanged: () => {}, onAmbientError: () => {} };
    client.watch(listenerResourceType, "echo.test", watcher);
    client.watch(routeConfigurationResourceType, "echo-route", watcher);
    client.watch(clusterResourceType, "echo", watcher);
    client.watch(endpointResourceType, "echo", watcher);
    send({ type: "started" });
  });
}

async function runTop(): Promise<void> {
  const rounds = numberOption("rounds", process.argv.includes("--quick") ? 3 : 10);
  const etcd = await startEtcd();
  const conn = connectEtcd({ endpoints: [etcd.endpoint] });
  const peers: Peer[] = [];
  try {
    const chain = [
      buildListener({ name: "echo.test", routeConfigName: "echo-route" }),
      buildRouteConfiguration({ name: "echo-route", cluster: "echo" }),
      buildCluster({ name: "echo" }),
      buildClusterLoadAssignment({ clusterName: "echo", localities: [{ zone: "a", endpoints: ["127.0.0.1:9"] }] }),
    ];
    await applyEtcdChange(
      conn,
      await planEtcdChange({ etcd: conn, resources: chain.map((resource) => ({ resource })) }),
    );
    const replicas: Peer[] = [];
    const ports: number[] = [];
    const startReplica = async (index: number) => {
      const replica = new Peer(FILE, "replica");
      peers.push(replica);
      replicas[index] = replica;
      const ready = await replica.ask<Message & { port: number }>(
        { type: "start", etcd: etcd.endpoint, ...(ports[index] ? { port: ports[index] } : {}) },
        "ready",
      );
      ports[index] = ready.port;
    };
    await startReplica(0);
    await startReplica(1);
    const uri = `ipv4:${ports.map((p) => `127.0.0.1:${p}`).join(",")}`;
    for (const node of CLIENTS) {
      const client = new Peer(FILE, "client");
      peers.push(client);
      await client.ask({ type: "start", uri, node }, "started");
    }
    const samples = new Map<string, number[]>(CLIENTS.map((c) => [c, []]));
    // A client that has not moved within 60 s of a kill is measured no further (its reconnect backoff may grow past
    // any bound: grpc-js-xds's did, to 47 s by the ninth kill); its row says so.
    let active = [...CLIENTS];
    const gaveUp = new Map<string, number>();
    for (let round = 0; round < rounds; round++) {
      // The replica every client uses: the one their streams are on.
      let serving = -1;
      for (let wait = 0; serving < 0; wait++) {
        const nodes = await Promise.all(
          replicas.map(async (r) => (await r.ask<Message & { nodes: string[] }>({ type: "stats" }, "stats")).nodes),
        );
        serving = nodes.findIndex((list) => active.every((c) => list.includes(c)));
        if (serving < 0) await new Promise((resolve) => setTimeout(resolve, 100));
        if (wait > 300) throw new Error(`clients on different replicas: ${JSON.stringify(nodes)}`);
      }
      const survivor = replicas[1 - serving]!;
      await survivor.ask({ type: "armRequests", nodes: [...active] }, "armed");
      const at = now();
      await replicas[serving]!.crash();
      const moved = new Set<string>();
      for (let i = 0; i < active.length; i++) {
        const request = await survivor.askWithin<Message & { node: string; at: number }>("request", 60_000);
        if (!request) {
          // The clients that did not move are no longer awaited; a request of theirs already on its way is dropped
          // (left queued, it would be taken for the answer to the next round's first question).
          await survivor.askDropping({ type: "disarm" }, "disarmed", "request");
          break;
        }
        moved.add(request.node);
        samples.get(request.node)?.push(request.at - at);
      }
      for (const c of active.filter((client) => !moved.has(client))) gaveUp.set(c, round + 1);
      active = active.filter((c) => moved.has(c));
      if (active.length === 0) throw new Error(`round ${round + 1}: no client moved within 60 s of the kill`);
      process.stderr.write(
        `round ${round + 1}: ${CLIENTS.map((c) => `${c} ${moved.has(c) ? `${samples.get(c)!.at(-1)!.toFixed(0)} ms` : "not moved"}`).join(", ")}\n`,
      );
      await startReplica(serving);
    }
    const ms = (value: number) => `${value.toFixed(1)} ms`;
    printTable(
      `failover: a replica killed (SIGKILL) under its clients, until the other replica gets each client's first request (2 etcd-fed replicas in one server_uri; ${rounds} rounds)`,
      ["client", "p50", "max", "min"],
      CLIENTS.map((c) => {
        const values = samples.get(c)!;
        const stopped = gaveUp.get(c);
        const max = stopped === undefined ? ms(Math.max(...values)) : `> 60 s at kill ${stopped} (not measured after)`;
        return [c, ms(quantile(values, 0.5)), max, ms(Math.min(...values))];
      }),
    );
  } finally {
    for (const peer of peers) peer.kill();
    conn.close();
    await etcd.close();
  }
}

const role = roleOf();
if (role === "replica") runReplica();
else if (role === "client") runClient();
else await runTop();
