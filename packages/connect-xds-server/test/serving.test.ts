// A36's serving states over real HTTP/2 against @xdskit/control-plane: not serving (zero bytes) until the first good
// Listener, serving after it, a Listener for another address, a Listener deletion, and a control-plane outage.
import { connect as http2Connect } from "node:http2";
import { connect, type Socket } from "node:net";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import type { ManagementServer } from "@xdskit/control-plane";
import { ClientResourceStatus } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import { createXdsClient, listenerResourceType, type XdsClient } from "@xdskit/xds-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EchoService, echoClient } from "./support/echo-service.js";
import {
  memoryLogger,
  notServing,
  plaintextTransport,
  type StartedServer,
  serverBootstrap,
  serving,
  startControlPlane,
  startServer,
} from "./support/harness.js";
import { serverListener } from "./support/server-listener.js";

const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";

/** Connects a raw TCP socket and resolves with every byte the server sent before it closed the connection. */
function bytesBeforeClose(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let received = 0;
    const socket: Socket = connect({ host, port });
    socket.on("data", (chunk) => {
      received += chunk.length;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(received));
    // Our side speaks first, as a client does, so a server that answers anything has the chance to.
    socket.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
  });
}

describe("serving states (A36)", () => {
  let controlPlane: ManagementServer;
  let started: StartedServer | undefined;
  let client: XdsClient | undefined;

  beforeEach(async () => {
    controlPlane = await startControlPlane();
  });
  afterEach(async () => {
    await started?.server.close();
    started = undefined;
    await client?.close();
    client = undefined;
    await controlPlane.close();
  });

  it("closes connections without sending a byte until its Listener arrives, then serves", async () => {
    started = await startServer(controlPlane);
    const { host, port, name } = started;
    expect(name).toBe(`grpc/server?xds.resource.listening_address=127.0.0.1:${port}`);
    expect(started.server.servingStatus()).toEqual({ serving: false, reason: `waiting for Listener ${name}` });
    expect(await bytesBeforeClose(host, port)).toBe(0);

    controlPlane.setResource(serverListener({ name, host, port }));
    await started.statuses.until(serving);
    expect(started.statuses.all).toEqual([{ serving: true }]);
    const echo = echoClient(plaintextTransport(host, port).transport);
    expect(await echo.unary({ value: "hi" })).toEqual(expect.objectContaining({ value: "echo:hi" }));
  });

  it("binds the host it is given, not every interface", async () => {
    started = await startServer(controlPlane, { host: "127.0.0.1" });
    const { port, name, host } = started;
    controlPlane.setResource(serverListener({ name, host, port }));
    await started.statuses.until(serving);
    // 127.0.0.2 is loopback too on Linux: a server bound to every interface would accept it.
    await expect(
      new Promise((resolve, reject) => {
        const socket = connect({ host: "127.0.0.2", port });
        socket.on("connect", () => resolve("connected"));
        socket.on("error", reject);
      }),
    ).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });

  it("does not serve a Listener whose address is not the listening one, and does not NACK it", async () => {
    client = createXdsClient({ bootstrap: serverBootstrap(controlPlane) });
    started = await startServer(controlPlane, { client });
    const { host, port, name } = started;
    controlPlane.setResource(serverListener({ name, host, port: port === 65535 ? 1 : port + 1 }));
    const status = await started.statuses.until(notServing);
    expect(status.reason).toBe(
      `Listener ${name}: its address 127.0.0.1:${port === 65535 ? 1 : port + 1} is not the listening address 127.0.0.1:${port}`,
    );
    const dump = client.dumpResources().genericXdsConfigs.find((config) => config.typeUrl === LDS);
    expect(dump?.clientStatus).toBe(ClientResourceStatus.ACKED);
    expect(await bytesBeforeClose(host, port)).toBe(0);

    // The right address then serves.
    controlPlane.setResource(serverListener({ name, host, port }));
    await started.statuses.until(serving);
    expect(await echoClient(plaintextTransport(host, port).transport).unary({ value: "x" })).toMatchObject({
      value: "echo:x",
    });
  });

  it("logs every transition when the application gives no serving-status callback", async () => {
    const logger = memoryLogger();
    started = await startServer(controlPlane, { logger, withoutStatusCallback: true });
    const { host, port, name } = started;
    const other = port === 65535 ? 1 : port + 1;
    const transitions = () =>
      logger.lines.filter((line) => /^(info|warn) \[connect-xds-server\] (not )?serving/.test(line));
    controlPlane.setResource(serverListener({ name, host, port }));
    await logger.waitFor("] serving");
    controlPlane.setResource(serverListener({ name, host, port: other }));
    await logger.waitFor("] not serving");
    const mark = logger.lines.length;
    controlPlane.setResource(serverListener({ name, host, port }));
    await logger.waitFor("] serving", mark);
    expect(transitions()).toEqual([
      "info [connect-xds-server] serving",
      `warn [connect-xds-server] not serving: Listener ${name}: its address 127.0.0.1:${other} is not the listening address 127.0.0.1:${port}`,
      "info [connect-xds-server] serving",
    ]);
    expect(started.statuses.all).toEqual([]);
  });

  // A88: a deletion is a data error; with fail_on_data_errors the Listener no longer exists, without it the client
  // keeps its cached copy (next test).
  it("stops serving when its Listener is deleted: the call in flight completes, the callback is told why", async () => {
    started = await startServer(controlPlane, { failOnDataErrors: true });
    const { host, port, name, echo } = started;
    controlPlane.setResource(serverListener({ name, host, port }));
    await started.statuses.until(serving);
    const calls = echoClient(plaintextTransport(host, port).transport);
    const inFlight = calls.held({ value: "a" });
    await echo.heldArrived();

    controlPlane.removeResource(LDS, name);
    const status = await started.statuses.until(notServing);
    expect(status.reason).toMatch(
      new RegExp(`^Listener ${name.replace(/[?.]/g, "\\$&")}: \\[NOT_FOUND\\] .*was removed by the xDS server`),
    );
    echo.release();
    expect(await inFlight).toMatchObject({ value: "held:a" });
    expect(await bytesBeforeClose(host, port)).toBe(0);
    // The next call needs a new connection, which the server closes at once (connect-node reports it CANCELED).
    await expect(calls.unary({ value: "after" })).rejects.toBeInstanceOf(ConnectError);
    expect(echo.calls.get("Unary")).toBeUndefined();
  });

  it("keeps serving a Listener deleted by a server without fail_on_data_errors (A88), and logs it", async () => {
    const logger = memoryLogger();
    started = await startServer(controlPlane, { logger });
    const { host, port, name } = started;
    controlPlane.setResource(serverListener({ name, host, port }));
    await started.statuses.until(serving);
    controlPlane.removeResource(LDS, name);
    await logger.waitFor("(the configuration in use stays)");
    expect(logger.lines.filter((line) => line.includes("[connect-xds-server]") && line.includes("removed"))).toEqual([
      expect.stringMatching(
        /^warn \[connect-xds-server\] Listener .*: \[NOT_FOUND\] .* \(the configuration in use stays\)$/,
      ),
    ]);
    expect(await echoClient(plaintextTransport(host, port).transport).unary({ value: "kept" })).toMatchObject({
      value: "echo:kept",
    });
    expect(started.statuses.all).toEqual([{ serving: true }]);
  });

  it("keeps serving through a control-plane outage", async () => {
    started = await startServer(controlPlane);
    const { host, port, name } = started;
    controlPlane.setResource(serverListener({ name, host, port }));
    await started.statuses.until(serving);
    await controlPlane.stop();
    // A fresh connection and call while the control plane is gone: the configuration in use stays.
    expect(await echoClient(plaintextTransport(host, port).transport).unary({ value: "down" })).toMatchObject({
      value: "echo:down",
    });
    expect(started.statuses.all).toEqual([{ serving: true }]);
    expect(started.server.servingStatus()).toEqual({ serving: true });
  });

  it("watches a Listener name with the bound port when listening on port 0, and an IPv6 host in brackets", async () => {
    started = await startServer(controlPlane, { host: "::1" });
    const { host, port, name } = started;
    expect(host).toBe("::1");
    expect(name).toBe(`grpc/server?xds.resource.listening_address=[::1]:${port}`);
    controlPlane.setResource(serverListener({ name, host: "0:0:0:0:0:0:0:1", port }));
    await started.statuses.until(serving);
    expect(await echoClient(plaintextTransport(host, port).transport).unary({ value: "v6" })).toMatchObject({
      value: "echo:v6",
    });
  });

  it("fails listen with a clear error when the port is in use", async () => {
    started = await startServer(controlPlane);
    const second = await import("../src/index.js").then(({ createXdsServer }) =>
      createXdsServer({ routes: () => {}, bootstrap: serverBootstrap(controlPlane) }),
    );
    try {
      await expect(second.listen({ host: "127.0.0.1", port: started.port })).rejects.toThrow(
        `cannot listen on 127.0.0.1:${started.port}: EADDRINUSE`,
      );
      expect(second.address()).toBeUndefined();
    } finally {
      await second.close();
    }
  });

  it("refuses a host that is not an IP address, a bootstrap without the Listener name template, and a bad maxPendingConnections", async () => {
    const { createXdsServer } = await import("../src/index.js");
    const server = createXdsServer({ routes: () => {}, bootstrap: serverBootstrap(controlPlane) });
    try {
      await expect(server.listen({ host: "localhost", port: 0 })).rejects.toThrow(
        "listen: host must be an IP address (the Listener's name holds it), got localhost",
      );
    } finally {
      await server.close();
    }
    const { server_listener_resource_name_template: _, ...withoutTemplate } = serverBootstrap(
      controlPlane,
    ) as unknown as Record<string, unknown>;
    expect(() => createXdsServer({ routes: () => {}, bootstrap: withoutTemplate as never })).toThrow(
      "server_listener_resource_name_template: is required",
    );
    for (const bad of [0, 1.5, -1, Number.NaN]) {
      expect(() =>
        createXdsServer({ routes: () => {}, bootstrap: serverBootstrap(controlPlane), maxPendingConnections: bad }),
      ).toThrow(`createXdsServer: maxPendingConnections must be an integer >= 1 or Infinity (got ${bad})`);
    }
  });

  it("keeps its last good Listener when an update is partly valid (NACKed naming the bad chain)", async () => {
    client = createXdsClient({ bootstrap: serverBootstrap(controlPlane) });
    started = await startServer(controlPlane, { client });
    const { host, port, name } = started;
    controlPlane.setResource(serverListener({ name, host, port }));
    await started.statuses.until(serving);
    const { transport, connections } = plaintextTransport(host, port);
    const calls = echoClient(transport);
    expect(await calls.unary({ value: "v1" })).toMatchObject({ value: "echo:v1" });

    // The first chain is fine; the second names a certificate provider instance the bootstrap does not have.
    const rejected = new Promise<void>((resolve) => {
      const cancel = client!.watch(listenerResourceType, name, {
        onResourceChanged() {},
        onAmbientError() {
          cancel();
          resolve();
        },
        onAmbientErrorCleared() {},
      });
    });
    controlPlane.setResource(
      serverListener({
        name,
        host,
        port,
        filterChains: [{}, { match: { prefixRanges: ["10.0.0.0/8"] }, tls: { identity: "missing" } }],
      }),
    );
    await rejected;
    const dump = client.dumpResources().genericXdsConfigs.find((config) => config.typeUrl === LDS);
    expect(dump?.clientStatus).toBe(ClientResourceStatus.NACKED);
    expect(dump?.errorState?.details).toMatch(/filter_chains\[1\].*missing/);
    // Served on the same connection (no drain) and on a new one; the serving state never changed.
    expect(await calls.unary({ value: "same" })).toMatchObject({ value: "echo:same" });
    expect(connections()).toBe(1);
    expect(await echoClient(plaintextTransport(host, port).transport).unary({ value: "new" })).toMatchObject({
      value: "echo:new",
    });
    expect(started.statuses.all).toEqual([{ serving: true }]);
  });

  it("stays not serving while its first Listener is rejected, the reason naming the field, then serves a good one", async () => {
    started = await startServer(controlPlane);
    const { host, port, name } = started;
    controlPlane.setResource(serverListener({ name, host, port, filterChains: [{ tls: { identity: "missing" } }] }));
    const status = await started.statuses.until(notServing);
    expect(status.reason).toMatch(
      /^Listener .*: .*filter_chains\[0\]\..*instance_name: unrecognized certificate provider instance name: missing/,
    );
    expect(await bytesBeforeClose(host, port)).toBe(0);
    controlPlane.setResource(serverListener({ name, host, port }));
    await started.statuses.until(serving);
    expect(await echoClient(plaintextTransport(host, port).transport).unary({ value: "good" })).toMatchObject({
      value: "echo:good",
    });
  });

  it("survives a handler that throws synchronously and a request Connect cannot read", async () => {
    const routes = (router: ConnectRouter) => {
      router.service(EchoService, {
        unary() {
          throw new Error("thrown synchronously");
        },
      } as never);
    };
    started = await startServer(controlPlane, { routes });
    const { host, port, name } = started;
    controlPlane.setResource(serverListener({ name, host, port }));
    await started.statuses.until(serving);
    const calls = echoClient(plaintextTransport(host, port).transport);
    for (let i = 0; i < 2; i++) {
      const error = await calls.unary({ value: "x" }).catch((e) => ConnectError.from(e));
      // Connect does not send an unexpected error's message to the client.
      expect(error).toMatchObject({ code: Code.Internal, rawMessage: "internal error" });
    }
    // An authority no URL can hold: Connect's adapter throws synchronously while reading the request.
    const session = http2Connect(`http://${host}:${port}`);
    try {
      const status = await new Promise<unknown>((resolve) => {
        const stream = session.request({
          ":method": "POST",
          ":path": "/xdskit.test.Echo/Unary",
          ":authority": "[bad",
          "content-type": "application/grpc",
          te: "trailers",
        });
        let headers: Record<string, unknown> = {};
        stream.on("response", (h) => {
          headers = h;
        });
        stream.on("trailers", (t) => {
          headers = { ...headers, ...t };
        });
        stream.on("error", (error: Error) => resolve(error.message));
        stream.resume();
        stream.on("close", () => resolve(headers["grpc-status"]));
        stream.end(Buffer.from([0, 0, 0, 0, 0]));
      });
      // INTERNAL, written by the server around Connect's handler (without it the throw is uncaught: checked).
      expect(status).toBe(String(Code.Internal));
    } finally {
      session.destroy();
    }
    expect(await calls.unary({ value: "y" }).catch((e) => ConnectError.from(e))).toMatchObject({
      code: Code.Internal,
    });
  });

  it("reports a client Listener under its name as not serving", async () => {
    client = createXdsClient({ bootstrap: serverBootstrap(controlPlane) });
    started = await startServer(controlPlane, { client });
    const { buildListener } = await import("@xdskit/control-plane");
    controlPlane.setResource(buildListener({ name: started.name, routeConfigName: "r" }));
    const status = await started.statuses.until(notServing);
    expect(status.reason).toBe(`Listener ${started.name} is a client Listener (api_listener), not a server Listener`);
  });
});
