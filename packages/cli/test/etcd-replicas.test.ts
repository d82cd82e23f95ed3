// Replicas of a control plane over etcd (`xdskit serve --etcd`, real processes) and clients of every kind whose
// bootstrap names all of them in one server_uri (docs/decisions.md#replicas-in-a-bootstrap): @xdskit/xds-client in
// state of the world and delta, @xdskit/xds-relay (and a client behind it), @xdskit/connect-xds and
// @grpc/grpc-js-xds making calls. Replicas are killed (SIGKILL) and restarted under them, and etcd itself: the
// clients move to another replica, get every change written meanwhile, and no watcher hears an error.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import * as grpcJsXds from "@grpc/grpc-js-xds";
import { createXdsTransport, type XdsTransport } from "@xdskit/connect-xds";
import { ClientStatusDiscoveryService } from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import type { EtcdInstance } from "@xdskit/test-etcd";
import {
  clusterResourceType,
  createXdsClient,
  type EndpointUpdate,
  endpointResourceType,
  type ResourceType,
  type XdsClient,
} from "@xdskit/xds-client";
import { createXdsRelay, type XdsRelay } from "@xdskit/xds-relay";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, hasEtcd } from "./support/etcd.js";
import { killAll, type Running, runXdskit, startXdskit } from "./support/xdskit.js";

const XDS_BOOTSTRAP_OPTION = "grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config";
const FETCH = "/envoy.service.status.v3.ClientStatusDiscoveryService/FetchClientStatus";

/** The listener → route → cluster → endpoints chain of echo.test, its endpoints at `port`. */
function chain(port: number): string {
  return JSON.stringify([
    {
      "@type": "type.googleapis.com/envoy.config.listener.v3.Listener",
      name: "echo.test",
      apiListener: {
        apiListener: {
          "@type":
            "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
          rds: { configSource: { ads: {} }, routeConfigName: "echo-route" },
          httpFilters: [
            {
              name: "router",
              typedConfig: { "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router" },
            },
          ],
        },
      },
    },
    {
      "@type": "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
      name: "echo-route",
      virtualHosts: [{ name: "echo", domains: ["*"], routes: [{ match: { prefix: "" }, route: { cluster: "echo" } }] }],
    },
    {
      "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
      name: "echo",
      type: "EDS",
      edsClusterConfig: { edsConfig: { ads: {} } },
    },
    {
      "@type": "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
      clusterName: "echo",
      endpoints: [
        {
          locality: { zone: "a" },
          loadBalancingWeight: 1,
          lbEndpoints: [{ endpoint: { address: { socketAddress: { address: "127.0.0.1", portValue: port } } } }],
        },
      ],
    },
  ]);
}

/** A backend answering FetchClientStatus with a ClientStatusResponse whose one client_scope is `name`. */
async function backend(name: string): Promise<{ port: number; server: grpc.Server }> {
  const scope = Buffer.concat([Buffer.from([0x22, name.length]), Buffer.from(name)]);
  const reply = Buffer.concat([Buffer.from([0x0a, scope.length]), scope]);
  const server = new grpc.Server();
  server.register(
    FETCH,
    (_call: unknown, callback: (error: null, value: Buffer) => void) => callback(null, reply),
    (b: Buffer) => b,
    (b: Buffer) => b,
    "unary",
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return { port, server };
}

type Event = { kind: "resource"; version: string; ports: number[] } | { kind: "error" | "ambient"; message: string };

/** Every event of a watch, ports for endpoints. */
function record(client: XdsClient, type: ResourceType<unknown>, name: string): Event[] {
  const events: Event[] = [];
  client.watch(type, name, {
    onResourceChanged(result) {
      if (!result.ok) {
        events.push({ kind: "error", message: result.error.message });
        return;
      }
      const endpoints = result.resource as Partial<EndpointUpdate>;
      const ports = (endpoints.priorities ?? []).flatMap((p) =>
        p.localities.flatMap((l) => l.endpoints.map((e) => e.addresses[0]!.port)),
      );
      events.push({ kind: "resource", version: result.version, ports });
    },
    onAmbientError(error) {
      events.push({ kind: "ambient", message: error.message });
    },
  });
  return events;
}

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Calls one after the other until stopped, counting answers per backend and failures. */
function callLoop(call: () => Promise<string>) {
  const answers = new Map<string, number>();
  const failures: string[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      try {
        const who = await call();
        answers.set(who, (answers.get(who) ?? 0) + 1);
      } catch (error) {
        failures.push((error as Error).message);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  return {
    answers,
    failures,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

describe.skipIf(!hasEtcd)("replicas over etcd and their clients", () => {
  const dir = mkdtempSync(join(tmpdir(), "xdskit-replicas-"));
  const files = join(dir, "xds");
  let etcd: EtcdInstance;
  let e: string[];
  const ports: number[] = [];
  const replicas: Running[] = [];
  const backends: { port: number; server: grpc.Server }[] = [];
  const closers: (() => unknown)[] = [];
  let uri: string;

  /** The endpoints' port the last apply wrote. */
  let current = 0;
  const apply = async (port: number) => {
    current = port;
    writeFileSync(join(files, "chain.json"), chain(port));
    const result = await runXdskit(["apply", files, ...e]);
    if (result.code !== 0) throw new Error(result.stderr);
  };
  const startReplica = async (index: number) => {
    const replica = startXdskit(["serve", ...e, "--port", String(ports[index])]);
    replicas[index] = replica;
    await replica.waitFor(/^serving etcd /, { timeoutMs: 20_000 });
  };

  beforeAll(async () => {
    const { startEtcd } = await import("@xdskit/test-etcd");
    etcd = await startEtcd();
    e = ["--etcd", etcd.endpoint];
    mkdirSync(files);
    backends.push(await backend("A"), await backend("B"), await backend("C"));
    await apply(backends[0]!.port);
    for (let i = 0; i < 3; i++) ports.push(await freePort());
    await Promise.all([0, 1, 2].map(startReplica));
    uri = `ipv4:${ports.map((p) => `127.0.0.1:${p}`).join(",")}`;
  }, 60_000);

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    killAll();
    for (const b of backends) b.server.forceShutdown();
    await etcd?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function client(delta: boolean, serverUri = uri): XdsClient {
    const created = createXdsClient({
      bootstrap: {
        xds_servers: [
          {
            server_uri: serverUri,
            channel_creds: [{ type: "insecure" }],
            ...(delta ? { api_type: "DELTA_GRPC" as const } : {}),
          },
        ],
        node: { id: "replica-test" },
      },
    });
    closers.push(() => created.close());
    return created;
  }

  it("three replicas serve the same resources with the same versions", async () => {
    const versions = await Promise.all(
      ports.map(async (port) => {
        const events = record(client(true, `127.0.0.1:${port}`), endpointResourceType, "echo");
        await until(() => events.length > 0, "endpoints");
        return events[0];
      }),
    );
    expect(versions[0]).toMatchObject({ kind: "resource", ports: [backends[0]!.port] });
    expect(versions[1]).toEqual(versions[0]);
    expect(versions[2]).toEqual(versions[0]);
    // The one-shot tools take the same bootstrap (their wildcard stream goes to the first address).
    const bootstrap = join(dir, "bootstrap.json");
    writeFileSync(
      bootstrap,
      JSON.stringify({
        xds_servers: [{ server_uri: uri, channel_creds: [{ type: "insecure" }] }],
        node: { id: "list" },
      }),
    );
    const list = await runXdskit(["list", "cds", "--bootstrap", bootstrap]);
    expect([list.code, list.stdout]).toEqual([0, "echo\n"]);
  });

  it("clients move to another replica when theirs dies and when it comes back, missing no change and hearing no error", async () => {
    // 1. Clients of each kind on the replicas (the first address: replica 0); calls reach backend A.
    // 2. Replica 0 is killed; while the clients move on, the endpoints become backend B's: every client gets it.
    // 3. Replica 0 restarts; replica 1 (where the clients went) is killed; the endpoints become C's: every client
    //    gets it. No watcher heard an error, no call failed, no watcher was told anything else.
    const sotw = client(false);
    const delta = client(true);
    const watched = [sotw, delta].map((c) => ({
      cluster: record(c, clusterResourceType, "echo"),
      endpoints: record(c, endpointResourceType, "echo"),
    }));
    const relay: XdsRelay = await createXdsRelay({
      upstream: {
        bootstrap: {
          xds_servers: [{ server_uri: uri, channel_creds: [{ type: "insecure" }], api_type: "DELTA_GRPC" }],
          node: { id: "relay" },
        },
      },
      historyLimit: 0,
    });
    closers.push(() => relay.close());
    const behindRelay = record(client(true, relay.address), endpointResourceType, "echo");
    const bootstrap = {
      xds_servers: [{ server_uri: uri, channel_creds: [{ type: "insecure" }] }],
      node: { id: "data-plane", cluster: "test", locality: { region: "local", zone: "a" } },
    };
    const transport: XdsTransport = createXdsTransport({
      target: "xds:///echo.test",
      bootstrap,
      defaultTimeoutMs: 5_000,
    });
    closers.push(() => transport.close());
    const csds = createClient(ClientStatusDiscoveryService, transport);
    const viaConnect = callLoop(async () => (await csds.fetchClientStatus({})).config[0]?.clientScope ?? "?");
    grpcJsXds.register();
    const channel = new grpc.Client("xds:///echo.test", grpc.credentials.createInsecure(), {
      [XDS_BOOTSTRAP_OPTION]: JSON.stringify(bootstrap),
    });
    closers.push(() => channel.close());
    const viaGrpcJs = callLoop(
      () =>
        new Promise<string>((resolve, reject) =>
          channel.makeUnaryRequest(
            FETCH,
            (b: Buffer) => b,
            (b: Buffer) => b,
            Buffer.alloc(0),
            { deadline: Date.now() + 5_000 },
            (error, reply) => (error ? reject(error) : resolve(reply!.subarray(4).toString())),
          ),
        ),
    );
    const reached = (port: number) => () =>
      watched.every(
        (w) => w.endpoints.at(-1)?.kind === "resource" && (w.endpoints.at(-1) as { ports: number[] }).ports[0] === port,
      ) && (behindRelay.at(-1) as { ports?: number[] } | undefined)?.ports?.[0] === port;
    await until(reached(backends[0]!.port), "every client to get A's endpoints");
    await until(
      () => (viaConnect.answers.get("A") ?? 0) > 0 && (viaGrpcJs.answers.get("A") ?? 0) > 0,
      "calls to reach A",
    );

    replicas[0]!.kill();
    await apply(backends[1]!.port);
    await until(reached(backends[1]!.port), "every client to get B's endpoints");
    await until(
      () => (viaConnect.answers.get("B") ?? 0) > 0 && (viaGrpcJs.answers.get("B") ?? 0) > 0,
      "calls to reach B",
    );

    await startReplica(0);
    replicas[1]!.kill();
    await apply(backends[2]!.port);
    await until(reached(backends[2]!.port), "every client to get C's endpoints");
    await until(
      () => (viaConnect.answers.get("C") ?? 0) > 0 && (viaGrpcJs.answers.get("C") ?? 0) > 0,
      "calls to reach C",
    );
    await Promise.all([viaConnect.stop(), viaGrpcJs.stop()]);
    await startReplica(1);

    const endpointsOf = (events: Event[]) =>
      events.map((event) => (event.kind === "resource" ? event.ports[0] : event.kind));
    const expected = backends.map((b) => b.port);
    for (const w of watched) {
      expect(w.cluster.map((event) => event.kind)).toEqual(["resource"]);
      expect(endpointsOf(w.endpoints)).toEqual(expected);
    }
    expect(endpointsOf(behindRelay)).toEqual(expected);
    expect(viaConnect.failures).toEqual([]);
    expect(viaGrpcJs.failures).toEqual([]);
  });

  it("replicas keep serving while etcd is down, and follow it again when it is back", async () => {
    const watcher = record(client(true), endpointResourceType, "echo");
    await until(() => watcher.length > 0, "endpoints");
    const before = watcher.length;
    await etcd.kill();
    await Promise.all(replicas.map((r) => r.waitFor(/etcd lost \(/, { from: "stderr" })));
    // A client arriving now is served what the replicas read.
    const late = record(client(false), endpointResourceType, "echo");
    await until(() => late.length > 0, "a late client's endpoints");
    expect(late[0]).toMatchObject({ kind: "resource", ports: [current] });
    await etcd.start();
    await Promise.all(replicas.map((r) => r.waitFor(/etcd back; /, { from: "stderr", timeoutMs: 20_000 })));
    const next = backends.find((b) => b.port !== current)!.port;
    await apply(next);
    await until(() => (watcher.at(-1) as { ports?: number[] }).ports?.[0] === next, "the change after etcd came back");
    expect(watcher.slice(before).map((event) => event.kind)).toEqual(["resource"]);
  });
});
