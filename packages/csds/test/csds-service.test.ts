// CSDS over real HTTP/2 (A40, A71): two @xdskit/xds-client instances (two data-plane targets) against
// @xdskit/control-plane, their dumps served by the CSDS service and read back with a Connect client.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createWritableIterable } from "@connectrpc/connect/protocol";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { buildCluster, createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { ClientResourceStatus } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import { ClientStatusDiscoveryService } from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import { clusterResourceType, createXdsClient, type XdsClient } from "@xdskit/xds-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { clientStatusRoutes, createClientStatusRegistry, formatClientConfig } from "../src/index.js";

let controlPlane: ManagementServer;
let csdsServer: http2.Http2Server;
const sessions = new Set<http2.ServerHttp2Session>();
const clients: XdsClient[] = [];
const registry = createClientStatusRegistry();
let csds: ReturnType<typeof createClient<typeof ClientStatusDiscoveryService>>;

beforeEach(async () => {
  controlPlane = await createManagementServer({ host: "127.0.0.1", port: 0 });
  csdsServer = http2.createServer(connectNodeAdapter({ routes: clientStatusRoutes(registry) }));
  csdsServer.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  await new Promise<void>((resolve) => csdsServer.listen(0, "127.0.0.1", resolve));
  const { port } = csdsServer.address() as AddressInfo;
  csds = createClient(ClientStatusDiscoveryService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }));
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const s of sessions) s.destroy();
  await new Promise<void>((resolve) => csdsServer.close(() => resolve()));
  await controlPlane.close();
});

function xdsClient(target: string): XdsClient {
  const client = createXdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: controlPlane.address, channel_creds: [{ type: "insecure" }] }],
      node: { id: `node-${target}` },
    },
    env: {},
    target,
  });
  clients.push(client);
  return client;
}

async function acked(client: XdsClient, name: string): Promise<void> {
  await new Promise<void>((resolve) => {
    client.watch(clusterResourceType, name, {
      onResourceChanged: (r) => {
        if (r.ok) resolve();
      },
      onAmbientError: () => {},
    });
  });
}

describe("CSDS service", () => {
  it("answers with an empty list when no client is registered", async () => {
    const response = await csds.fetchClientStatus({});
    expect(response.config).toEqual([]);
  });

  it("answers with an empty config for a client that watches nothing", async () => {
    const unregister = registry.add(xdsClient("xds:///idle"));
    try {
      const response = await csds.fetchClientStatus({});
      expect(response.config.map((c) => [c.clientScope, c.node?.id, c.genericXdsConfigs.length])).toEqual([
        ["xds:///idle", "node-xds:///idle", 0],
      ]);
    } finally {
      unregister();
    }
  });

  it("reports one ClientConfig per client scope, over the unary and the streaming method", async () => {
    controlPlane.setResources([buildCluster({ name: "a" }), buildCluster({ name: "b" })]);
    const one = xdsClient("xds:///one");
    const two = xdsClient("xds:///two");
    const unregister = [registry.add(one), registry.add(two)];
    try {
      await Promise.all([acked(one, "a"), acked(two, "b")]);
      const fetched = await csds.fetchClientStatus({});
      const summary = fetched.config.map((c) => ({
        scope: c.clientScope,
        resources: c.genericXdsConfigs.map((g) => `${g.name}:${ClientResourceStatus[g.clientStatus]}`),
      }));
      expect(summary).toEqual([
        { scope: "xds:///one", resources: ["a:ACKED"] },
        { scope: "xds:///two", resources: ["b:ACKED"] },
      ]);
      const requests = createWritableIterable<{ nodeMatchers?: never[] }>();
      const responses = csds.streamClientStatus(requests)[Symbol.asyncIterator]();
      await requests.write({});
      const first = await responses.next();
      expect(first.done ? [] : first.value.config.map((c) => c.clientScope)).toEqual(["xds:///one", "xds:///two"]);
      unregister[1]!();
      await requests.write({});
      const second = await responses.next();
      expect(second.done ? [] : second.value.config.map((c) => c.clientScope)).toEqual(["xds:///one"]);
      requests.close();
      expect((await responses.next()).done).toBe(true);
    } finally {
      for (const u of unregister) u();
    }
  });

  it("rejects node_matchers with INVALID_ARGUMENT", async () => {
    const error = await csds.fetchClientStatus({ nodeMatchers: [{}] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.InvalidArgument);
  });

  it("formats a dump as a table a person can read", async () => {
    controlPlane.setResource(buildCluster({ name: "a" }));
    const client = xdsClient("xds:///table");
    await acked(client, "a");
    const text = formatClientConfig(client.dumpResources());
    const lines = text.split("\n");
    expect(lines[0]).toBe("client xds:///table, node node-xds:///table");
    expect(lines[1]).toMatch(/^type +name +status +version +last error$/);
    expect(lines[3]).toMatch(/^Cluster +a +ACKED +\S+$/);
  });
});
