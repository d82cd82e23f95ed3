// `xdskit csds` against two CSDS servers on 127.0.0.1:
//  - @grpc/grpc-js-xds's own (registered in @grpc/grpc-js's admin services, which nobody here wrote): a grpc-js
//    channel resolves xds:///echo.test from our control plane, then the table shows its four resources ACKED;
//  - ours (@xdskit/csds over an @xdskit/xds-client): the table, --json, and --watch printing again on a change;
//  - ours with three clients of three targets (A71: one ClientConfig per client_scope): a table for each, in
//    order, with its own node and resources, and every scope in --json.
// Each step waits on the control plane's hooks for the ACKs before asking.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as grpcJsXds from "@grpc/grpc-js-xds";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  CDS_TYPE_URL,
  createManagementServer,
  EDS_TYPE_URL,
  type ManagementServer,
} from "@xdskit/control-plane";
import { clientStatusRoutes, createClientStatusRegistry } from "@xdskit/csds";
import { clusterResourceType, createXdsClient, listenerResourceType, type XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killAll, runXdskit, startXdskit } from "./support/xdskit.js";

const XDS_BOOTSTRAP_OPTION = "grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config";

/** A CSDS server (@xdskit/csds on node:http2) for `registry` on 127.0.0.1; `close` ends its sessions too. */
async function serveCsds(registry: ReturnType<typeof createClientStatusRegistry>) {
  const server = http2.createServer(connectNodeAdapter({ routes: clientStatusRoutes(registry) }));
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close() {
      for (const session of sessions) session.destroy();
      server.close();
    },
  };
}

/** Resolves once `client` has a first answer (a resource or an error) for `name`. */
function watched(client: XdsClient, type: typeof clusterResourceType | typeof listenerResourceType, name: string) {
  return new Promise<void>((resolve) => {
    client.watch(type as typeof clusterResourceType, name, {
      onResourceChanged: () => resolve(),
      onAmbientError: () => {},
    });
  });
}

/** The table rows after the title and header, with runs of spaces as one. */
function rows(table: string): string[] {
  return table
    .trimEnd()
    .split("\n")
    .slice(3)
    .map((line) => line.replace(/ {2,}/g, " "));
}

describe("xdskit csds", () => {
  let controlPlane: ManagementServer;

  beforeAll(async () => {
    controlPlane = await createManagementServer();
    controlPlane.setSnapshot([
      buildListener({ name: "echo.test", routeConfigName: "echo-route" }),
      buildRouteConfiguration({ name: "echo-route", cluster: "echo" }),
      buildCluster({ name: "echo" }),
      buildClusterLoadAssignment({ clusterName: "echo", localities: [{ endpoints: ["127.0.0.1:50051"] }] }),
    ]);
  });
  afterAll(async () => {
    killAll();
    await controlPlane.close();
  });

  describe("against grpc-js-xds's CSDS in grpc-js's admin services", () => {
    let channelClient: grpc.Client;
    let admin: grpc.Server;
    let adminPort: number;

    beforeAll(async () => {
      grpcJsXds.register();
      const mark = controlPlane.hooks.mark();
      channelClient = new grpc.Client("xds:///echo.test", grpc.credentials.createInsecure(), {
        [XDS_BOOTSTRAP_OPTION]: JSON.stringify({
          xds_servers: [{ server_uri: controlPlane.address, channel_creds: [{ type: "insecure" }] }],
          node: { id: "grpc-js-node", cluster: "cli-test", locality: { region: "local", zone: "a" } },
        }),
      });
      channelClient.getChannel().getConnectivityState(true); // starts resolving
      await controlPlane.hooks.waitForRequest((r) => r.typeUrl === EDS_TYPE_URL && r.disposition === "ack", {
        after: mark,
      });
      admin = new grpc.Server();
      grpc.addAdminServicesToServer(admin);
      adminPort = await new Promise<number>((resolve, reject) =>
        admin.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, port) =>
          error ? reject(error) : resolve(port),
        ),
      );
    });
    afterAll(() => {
      channelClient?.close();
      admin?.forceShutdown();
    });

    it("prints the channel's four resources, ACKED, with the versions the control plane sent", async () => {
      const { code, stdout, stderr } = await runXdskit(["csds", `127.0.0.1:${adminPort}`]);
      expect(stderr).toBe("");
      expect(code).toBe(0);
      const tables = stdout.split("\n\n");
      const ours = tables.find((table) => table.includes("node grpc-js-node"));
      if (!ours) throw new Error(`no client of node grpc-js-node in:\n${stdout}`);
      const version = (type: string) => controlPlane.typeVersion(type);
      expect(rows(ours).sort()).toEqual(
        [
          `Cluster echo ACKED ${version(CDS_TYPE_URL)}`,
          `ClusterLoadAssignment echo ACKED ${version(EDS_TYPE_URL)}`,
          `Listener echo.test ACKED ${controlPlane.typeVersion("type.googleapis.com/envoy.config.listener.v3.Listener")}`,
          `RouteConfiguration echo-route ACKED ${controlPlane.typeVersion("type.googleapis.com/envoy.config.route.v3.RouteConfiguration")}`,
        ].sort(),
      );
    });
  });

  describe("against @xdskit/csds", () => {
    let client: XdsClient;
    let csds: Awaited<ReturnType<typeof serveCsds>>;
    let address: string;

    beforeAll(async () => {
      client = createXdsClient({
        bootstrap: {
          xds_servers: [{ server_uri: controlPlane.address, channel_creds: [{ type: "insecure" }] }],
          node: { id: "xdskit-node" },
        },
        target: "xds:///echo.test",
      });
      const registry = createClientStatusRegistry();
      registry.add(client);
      await Promise.all([
        watched(client, listenerResourceType, "echo.test"),
        watched(client, clusterResourceType, "echo"),
      ]);
      csds = await serveCsds(registry);
      address = csds.address;
    });
    afterAll(async () => {
      await client?.close();
      csds?.close();
    });

    it("prints the table with the client's scope and node", async () => {
      const { code, stdout } = await runXdskit(["csds", address]);
      expect(code).toBe(0);
      const [title, header] = stdout.split("\n");
      expect(title).toBe("client xds:///echo.test, node xdskit-node");
      expect(header?.replace(/ {2,}/g, " ")).toBe("type name status version last error");
      expect(rows(stdout)).toEqual([
        `Listener echo.test ACKED ${controlPlane.typeVersion("type.googleapis.com/envoy.config.listener.v3.Listener")}`,
        `Cluster echo ACKED ${controlPlane.typeVersion(CDS_TYPE_URL)}`,
      ]);
    });

    it("--json prints the ClientStatusResponse as proto JSON, resources expanded", async () => {
      const { code, stdout } = await runXdskit(["csds", address, "--json"]);
      expect(code).toBe(0);
      const response = JSON.parse(stdout);
      expect(response.config).toHaveLength(1);
      expect(response.config[0].clientScope).toBe("xds:///echo.test");
      const cluster = response.config[0].genericXdsConfigs.find((c: { name: string }) => c.name === "echo");
      expect(cluster).toMatchObject({
        typeUrl: CDS_TYPE_URL,
        clientStatus: "ACKED",
        xdsConfig: { "@type": CDS_TYPE_URL, name: "echo", type: "EDS" },
      });
    });

    it("--watch prints again when the config changes and exits 0 on Ctrl-C", async () => {
      const watch = startXdskit(["csds", address, "--watch", "--interval-ms", "100"]);
      const before = controlPlane.typeVersion(CDS_TYPE_URL);
      await watch.waitFor(new RegExp(`Cluster +echo +ACKED +${before}\\n`));
      const mark = controlPlane.hooks.mark();
      const after = controlPlane.setResource(buildCluster({ name: "echo", edsServiceName: "echo-v2" }));
      await controlPlane.hooks.waitForRequest((r) => r.typeUrl === CDS_TYPE_URL && r.disposition === "ack", {
        after: mark,
      });
      const text = await watch.waitFor(new RegExp(`Cluster +echo +ACKED +${after}\\n`));
      expect(text.match(/^--- \d{4}-/gm)).toHaveLength(2);
      const { code } = await watch.interrupt();
      expect(code).toBe(0);
    });

    it("exits 1 with the reason when nothing answers", async () => {
      const { code, stderr } = await runXdskit(["csds", "127.0.0.1:1", "--timeout-ms", "2000"]);
      expect(code).toBe(1);
      expect(stderr).toMatch(/^xdskit csds: no answer from CSDS at 127\.0\.0\.1:1: \[unavailable\]/);
    });
  });

  describe("against @xdskit/csds with a client per target (A71 scopes)", () => {
    const targets = [
      { target: "xds:///echo.test", node: "node-a", watch: [listenerResourceType, "echo.test"] as const },
      { target: "xds:///other.test", node: "node-b", watch: [clusterResourceType, "echo"] as const },
      // Its cluster does not exist: it stays REQUESTED (the does-not-exist timer is 15 s away).
      { target: "#server", node: "node-c", watch: [clusterResourceType, "missing"] as const },
    ];
    const clients: XdsClient[] = [];
    let csds: Awaited<ReturnType<typeof serveCsds>>;

    beforeAll(async () => {
      const registry = createClientStatusRegistry();
      for (const { target, node } of targets) {
        const client = createXdsClient({
          bootstrap: {
            xds_servers: [{ server_uri: controlPlane.address, channel_creds: [{ type: "insecure" }] }],
            node: { id: node },
          },
          target,
        });
        clients.push(client);
        registry.add(client);
      }
      await Promise.all(targets.slice(0, 2).map(({ watch: [type, name] }, i) => watched(clients[i]!, type, name)));
      clients[2]!.watch(clusterResourceType, "missing", { onResourceChanged: () => {}, onAmbientError: () => {} });
      csds = await serveCsds(registry);
    });
    afterAll(async () => {
      await Promise.all(clients.map((c) => c.close()));
      csds?.close();
    });

    it("prints one table per client scope, in order, each with its node and only its resources", async () => {
      const { code, stdout } = await runXdskit(["csds", csds.address]);
      expect(code).toBe(0);
      const tables = stdout.trimEnd().split("\n\n");
      expect(tables.map((table) => table.split("\n")[0])).toEqual([
        "client xds:///echo.test, node node-a",
        "client xds:///other.test, node node-b",
        "client #server, node node-c",
      ]);
      const version = (type: string) => controlPlane.typeVersion(type);
      expect(tables.map(rows)).toEqual([
        [`Listener echo.test ACKED ${version("type.googleapis.com/envoy.config.listener.v3.Listener")}`],
        [`Cluster echo ACKED ${version(CDS_TYPE_URL)}`],
        ["Cluster missing REQUESTED -"],
      ]);
    });

    it("--json carries every scope", async () => {
      const { code, stdout } = await runXdskit(["csds", csds.address, "--json"]);
      expect(code).toBe(0);
      const { config } = JSON.parse(stdout);
      expect(config.map((c: { clientScope: string; node: { id: string } }) => [c.clientScope, c.node.id])).toEqual(
        targets.map((t) => [t.target, t.node]),
      );
    });
  });
});
