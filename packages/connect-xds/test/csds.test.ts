// CSDS (A40) through the transport's own client: a transport made from a bootstrap exposes the client it made, and
// @xdskit/csds serves that client's config dump over HTTP/2 to a Connect client.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { createClient } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import type { ManagementServer } from "@xdskit/control-plane";
import { clientStatusRoutes, createClientStatusRegistry } from "@xdskit/csds";
import { ClientResourceStatus } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import { ClientStatusDiscoveryService } from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import { createXdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient } from "./support/echo-client.js";
import { bootstrapFor, simpleSnapshot, startControlPlane } from "./support/harness.js";

describe("CSDS through transport.xdsClient", () => {
  let server: ManagementServer;
  let backend: Backend;

  beforeAll(async () => {
    [server, backend] = await Promise.all([startControlPlane(), startBackend("a")]);
    server.setSnapshot(simpleSnapshot("status", "status-cluster", [{ zone: "z", endpoints: [backend.address] }]));
  });
  afterAll(async () => {
    await Promise.all([backend.close(), server.close()]);
  });

  it("serves the config dump of the client a transport made, under the transport's target", async () => {
    const transport = createXdsTransport({ target: "xds:///status", bootstrap: bootstrapFor(server) });
    const registry = createClientStatusRegistry();
    const unregister = registry.add(transport.xdsClient);
    const csdsServer = http2.createServer(connectNodeAdapter({ routes: clientStatusRoutes(registry) }));
    const sessions = new Set<http2.ServerHttp2Session>();
    csdsServer.on("session", (session) => sessions.add(session));
    await new Promise<void>((resolve) => csdsServer.listen(0, "127.0.0.1", resolve));
    try {
      expect((await echoClient(transport).unary({ value: "x" })).value).toBe("a:x");
      const { port } = csdsServer.address() as AddressInfo;
      const csds = createClient(
        ClientStatusDiscoveryService,
        createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }),
      );
      const { config } = await csds.fetchClientStatus({});
      expect(config.map((c) => c.clientScope)).toEqual(["xds:///status"]);
      const rows = (config[0]?.genericXdsConfigs ?? [])
        .map(
          (g) => `${g.typeUrl.slice(g.typeUrl.lastIndexOf(".") + 1)} ${g.name} ${ClientResourceStatus[g.clientStatus]}`,
        )
        .sort();
      expect(rows).toEqual([
        "Cluster status-cluster ACKED",
        "ClusterLoadAssignment status-cluster ACKED",
        "Listener status ACKED",
        "RouteConfiguration status-route ACKED",
      ]);
    } finally {
      unregister();
      await transport.close();
      for (const session of sessions) session.close();
      await new Promise((resolve) => csdsServer.close(resolve));
    }
  });

  it("exposes the caller's client as given", async () => {
    const client = createXdsClient({ bootstrap: bootstrapFor(server) });
    const transport = createXdsTransport({ target: "xds:///status", client });
    expect(transport.xdsClient).toBe(client);
    await transport.close();
    await client.close();
  });
});
