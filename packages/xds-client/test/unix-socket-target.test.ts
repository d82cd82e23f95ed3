// `server_uri` targets over the real transport: unix domain sockets (`unix:///path`, `unix:/path`, and Linux's
// `unix-abstract:`) reach @xdskit/control-plane over HTTP/2, and a target that does not parse fails as a connection
// error instead of throwing.
//
// The control plane listens on TCP only (its options take a host and a port), so each test puts a byte-for-byte
// relay on the socket path in front of it: the client's HTTP/2 connection really travels over the unix socket, and
// the relay counts the connections it carried.
//
// Steps per target: (1) start the control plane with cluster "c"; (2) listen on the socket path, relaying to the
// control plane; (3) create a client whose only server is the unix target; (4) watch cluster "c" and expect it;
// (5) expect the relay to have carried the connection and the control plane to have seen one stream.
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildCluster, createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type ClusterUpdate,
  clusterResourceType,
  createConnectTransport,
  createXdsClient,
  DEFAULT_MAX_RECEIVE_MESSAGE_BYTES,
  parseBootstrap,
  type XdsClient,
  type XdsServerConfig,
} from "../src/index.js";

let controlPlane: ManagementServer;
let directory: string;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  controlPlane = await createManagementServer({ host: "127.0.0.1", port: 0 });
  controlPlane.setResources([buildCluster({ name: "c" })]);
  directory = mkdtempSync(join(tmpdir(), "xdskit-unix-"));
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await controlPlane.close();
  rmSync(directory, { recursive: true, force: true });
});

/** Listens on `path` and relays every connection to the control plane; resolves with a connection counter. */
async function relay(path: string): Promise<{ connections: number }> {
  const counter = { connections: 0 };
  const sockets = new Set<Socket>();
  const server: Server = createServer((inbound) => {
    counter.connections++;
    const outbound = createConnection({ host: "127.0.0.1", port: controlPlane.port });
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => {
        sockets.delete(socket);
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return counter;
}

function clientFor(serverUri: string): XdsClient {
  const client = createXdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: serverUri, channel_creds: [{ type: "insecure" }] }],
      node: { id: "unix" },
    },
    env: {},
  });
  cleanups.push(() => client.close());
  return client;
}

function firstResource(client: XdsClient, name: string): Promise<ClusterUpdate> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no cluster ${name} within 5 s`)), 5_000);
    client.watch(clusterResourceType, name, {
      onResourceChanged(result) {
        clearTimeout(timer);
        if (result.ok) resolve(result.resource);
        else reject(result.error);
      },
      onAmbientError() {},
    });
  });
}

describe("unix domain socket targets", () => {
  it.each([
    ["unix:///<dir>/xds.sock", (dir: string) => ({ path: join(dir, "a.sock"), uri: `unix://${join(dir, "a.sock")}` })],
    ["unix:/<dir>/xds.sock", (dir: string) => ({ path: join(dir, "b.sock"), uri: `unix:${join(dir, "b.sock")}` })],
  ])("%s reaches the control plane over the socket", async (_form, target) => {
    const { path, uri } = target(directory);
    const carried = await relay(path);
    const streamsBefore = controlPlane.hooks.history().filter((e) => e.type === "stream-open").length;
    const cluster = await firstResource(clientFor(uri), "c");
    expect(cluster.name).toBe("c");
    expect(carried.connections).toBe(1);
    expect(controlPlane.hooks.history().filter((e) => e.type === "stream-open")).toHaveLength(streamsBefore + 1);
  });

  it.runIf(process.platform === "linux")("unix-abstract:<name> reaches the control plane", async () => {
    const name = `xdskit-test-${process.pid}-${Date.now()}`;
    const carried = await relay(`\0${name}`);
    const cluster = await firstResource(clientFor(`unix-abstract:${name}`), "c");
    expect(cluster.name).toBe("c");
    expect(carried.connections).toBe(1);
  });

  it("a socket nobody listens on is a connection error for the watchers", async () => {
    const uri = `unix://${join(directory, "nobody.sock")}`;
    const error = await firstResource(clientFor(uri), "c").then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(/^\[UNAVAILABLE\] xDS channel for server unix:\/\/\/.*nobody\.sock: .*ENOENT/);
  });
});

describe("a server config that bypassed the bootstrap", () => {
  it("with a server_uri that does not parse, fails its streams with the reason instead of throwing", async () => {
    const bootstrap = parseBootstrap({ xds_servers: [{ server_uri: "cp:1", channel_creds: [{ type: "insecure" }] }] });
    const server: XdsServerConfig = { ...bootstrap.xdsServers[0]!, serverUri: "exa mple:443" };
    const transport = createConnectTransport(server, { maxReceiveMessageBytes: DEFAULT_MAX_RECEIVE_MESSAGE_BYTES });
    try {
      const stream = transport.streamAggregatedResources();
      await expect(stream.responses.next()).rejects.toThrow(
        /invalid server_uri "exa mple:443": "exa mple" is not a valid host name or IP address/,
      );
    } finally {
      transport.close();
    }
  });

  it("watch() does not throw: the watchers get the connection error", async () => {
    const client = createXdsClient({
      bootstrap: { xds_servers: [{ server_uri: "cp:1", channel_creds: [{ type: "insecure" }] }], node: { id: "n" } },
      env: {},
      transportFactory: (server, options) => createConnectTransport({ ...server, serverUri: "exa mple:443" }, options),
    });
    cleanups.push(() => client.close());
    const error = await firstResource(client, "c").then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(/^\[UNAVAILABLE\] .*invalid server_uri "exa mple:443"/);
  });
});
