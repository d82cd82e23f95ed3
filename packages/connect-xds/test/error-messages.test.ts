// The errors and log lines a user reads, over real HTTP/2 against the control plane, asserted word for word: what a
// call that times out was waiting for (the Listener, its RouteConfiguration, the Cluster, its endpoints, a
// connection), a resource that does not exist named by its type, the xDS node ID once, and one log line per ADS
// failure.
import * as net from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  CDS_TYPE_URL,
  createManagementServer,
  EDS_TYPE_URL,
  LDS_TYPE_URL,
  type ManagementServer,
  RDS_TYPE_URL,
} from "@xdskit/control-plane";
import { type BootstrapConfig, createXdsClient, type Logger, type XdsClient } from "@xdskit/xds-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { startBackend } from "./support/backends.js";
import { echoClient } from "./support/echo-client.js";
import { NODE_ID } from "./support/harness.js";

const NODE = `(xDS node ID "${NODE_ID}")`;

function bootstrap(server: ManagementServer, apiType: "GRPC" | "DELTA_GRPC" = "GRPC"): BootstrapConfig {
  return {
    xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: apiType }],
    node: { id: NODE_ID },
  };
}

/** Lets pending I/O callbacks and 0 ms timers run a few times (a repeated log line would come within them). */
async function turns(count = 5): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

/** The code and rawMessage of the error `call` fails with. */
async function failure(call: Promise<unknown>): Promise<{ code: Code; message: string }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
  if (error === undefined) throw new Error("the call succeeded");
  return { code: error.code, message: error.rawMessage };
}

describe("error messages", () => {
  let server: ManagementServer;
  let clients: XdsClient[];
  let transports: XdsTransport[];
  let silent: net.Server;
  let silentConnection: Promise<void>;
  const sockets = new Set<net.Socket>();

  beforeAll(async () => {
    server = await createManagementServer();
    // Accepts TCP connections and never speaks HTTP/2: a connection to it stays CONNECTING.
    let connected: () => void = () => {};
    silentConnection = new Promise((resolve) => {
      connected = resolve;
    });
    silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => {});
      connected();
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const silentAddress = `127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
    server.setResources([
      buildListener({ name: "no-route", routeConfigName: "absent-route" }),
      buildListener({ name: "no-cluster", routeConfigName: "no-cluster-route" }),
      buildRouteConfiguration({ name: "no-cluster-route", cluster: "absent-cluster" }),
      buildListener({ name: "no-endpoints", routeConfigName: "no-endpoints-route" }),
      buildRouteConfiguration({ name: "no-endpoints-route", cluster: "endpointless" }),
      buildCluster({ name: "endpointless" }),
      buildListener({ name: "connecting", routeConfigName: "connecting-route" }),
      buildRouteConfiguration({ name: "connecting-route", cluster: "silent" }),
      buildCluster({ name: "silent" }),
      buildClusterLoadAssignment({ clusterName: "silent", localities: [{ zone: "z", endpoints: [silentAddress] }] }),
    ]);
  });
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await server.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });
  clients = [];
  transports = [];

  function transport(name: string, apiType: "GRPC" | "DELTA_GRPC" = "GRPC") {
    const client = createXdsClient({ bootstrap: bootstrap(server, apiType) });
    clients.push(client);
    const made = createXdsTransport({ target: `xds:///${name}`, client });
    transports.push(made);
    return echoClient(made);
  }

  /** Resolves once the client asked the control plane for `name` of `typeUrl`: all before it was handled. */
  const asked = (typeUrl: string, name: string) => (after: number) =>
    server.hooks.waitForRequest(
      (r) => r.typeUrl === typeUrl && r.kind === "sotw" && r.request.resourceNames.includes(name),
      { after },
    );

  it.each([
    ["greter", asked(LDS_TYPE_URL, "greter"), `the xDS Listener "greter" (LDS) ${NODE}`],
    [
      "no-route",
      asked(RDS_TYPE_URL, "absent-route"),
      `the xDS RouteConfiguration "absent-route" (RDS) of Listener "no-route" ${NODE}`,
    ],
    ["no-cluster", asked(CDS_TYPE_URL, "absent-cluster"), `the xDS Cluster "absent-cluster" (CDS) ${NODE}`],
    [
      "no-endpoints",
      asked(EDS_TYPE_URL, "endpointless"),
      `the endpoints of cluster "endpointless": the xDS ClusterLoadAssignment "endpointless" (EDS) ${NODE}`,
    ],
    ["connecting", () => silentConnection, `a connection to cluster "silent" (CONNECTING)`],
  ])("a call to %s that times out names what it waited for", async (name, reached, waitingFor) => {
    const mark = server.hooks.mark();
    const echo = transport(name);
    // The transport got as far as it can: what the call waits for is what the configuration lacks.
    await reached(mark);
    expect(await failure(echo.unary({ value: "x" }, { timeoutMs: 50 }))).toEqual({
      code: Code.DeadlineExceeded,
      message: `deadline exceeded while waiting for ${waitingFor}`,
    });
  });

  it("names the type of a resource that does not exist, and the node ID once (delta)", async () => {
    expect(await failure(transport("greter", "DELTA_GRPC").unary({ value: "x" }))).toEqual({
      code: Code.Unavailable,
      message: expect.stringMatching(
        /^xDS Listener "greter" does not exist on the xDS server \(version \d+\) \(xDS node ID "connect-xds-test"\)$/,
      ),
    });
    expect(await failure(transport("no-cluster", "DELTA_GRPC").unary({ value: "x" }))).toEqual({
      code: Code.Unavailable,
      message: expect.stringMatching(
        /^xDS Cluster "absent-cluster" does not exist on the xDS server \(version \d+\) \(xDS node ID "connect-xds-test"\)$/,
      ),
    });
    expect(await failure(transport("no-endpoints", "DELTA_GRPC").unary({ value: "x" }))).toEqual({
      code: Code.Unavailable,
      message: expect.stringMatching(
        /^xDS ClusterLoadAssignment "endpointless" does not exist on the xDS server \(version \d+\) \(xDS node ID "connect-xds-test"\)$/,
      ),
    });
  });
});

describe("logging", () => {
  /** A logger that keeps its lines and tells when one matches. */
  function recordingLogger() {
    const lines: string[] = [];
    let waiting: { pattern: RegExp; resolve: () => void } | undefined;
    const add = (level: string) => (message: string | (() => string)) => {
      const line = `${level} ${typeof message === "function" ? message() : message}`;
      lines.push(line);
      if (waiting?.pattern.test(line)) waiting.resolve();
    };
    const logger: Logger = { error: add("error"), warn: add("warn"), info: add("info"), debug: () => {} };
    return {
      logger,
      lines,
      until: (pattern: RegExp) =>
        lines.some((line) => pattern.test(line))
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
              waiting = { pattern, resolve };
            }),
    };
  }

  async function servedThenLost(withLogger: (log: Logger, bootstrap: BootstrapConfig) => XdsTransport) {
    const server = await createManagementServer();
    const backend = await startBackend("a");
    server.setSnapshot([
      buildListener({ name: "logged", routeConfigName: "logged-route" }),
      buildRouteConfiguration({ name: "logged-route", cluster: "logged-cluster" }),
      buildCluster({ name: "logged-cluster" }),
      buildClusterLoadAssignment({
        clusterName: "logged-cluster",
        localities: [{ zone: "z", endpoints: [backend.address] }],
      }),
    ]);
    const log = recordingLogger();
    const made = withLogger(log.logger, bootstrap(server));
    expect((await echoClient(made).unary({ value: "x" })).value).toBe("a:x");
    await server.close();
    return { log, made, backend, address: server.address };
  }

  it("prints an ADS failure once when the transport made its client (logger shared with it)", async () => {
    const { log, made, backend, address } = await servedThenLost((logger, b) =>
      createXdsTransport({ target: "xds:///logged", bootstrap: b, logger }),
    );
    try {
      await log.until(/failed with no responses received/);
      await turns();
      const about = log.lines.filter((line) => line.includes(`connect ECONNREFUSED ${address}`));
      expect(about).toEqual([
        expect.stringMatching(
          new RegExp(
            `^warn \\[xds-client\\] \\[xds server ${address}\\] ADS call #\\d+ failed with no responses received \\(UNAVAILABLE: connect ECONNREFUSED ${address}\\)$`,
          ),
        ),
      ]);
    } finally {
      await made.close();
      await backend.close();
    }
  });

  it("prints an ADS failure once when the client is the caller's (Listener and RouteConfiguration both hear it)", async () => {
    let client: XdsClient | undefined;
    const { log, made, backend, address } = await servedThenLost((logger, b) => {
      client = createXdsClient({ bootstrap: b });
      return createXdsTransport({ target: "xds:///logged", client, logger });
    });
    try {
      await log.until(/ECONNREFUSED/);
      await turns();
      // The routes line the first call brought (info) is not about the failure.
      expect(log.lines.filter((line) => !line.startsWith("info "))).toEqual([
        `warn [connect-xds xds:///logged] xDS channel for server ${address}: xDS call failed with no responses received; status: UNAVAILABLE: connect ECONNREFUSED ${address} ${NODE}; calls keep the last good configuration`,
      ]);
    } finally {
      await made.close();
      await client?.close();
      await backend.close();
    }
  });
});
