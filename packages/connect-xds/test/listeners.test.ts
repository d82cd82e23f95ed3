// Listeners and routes over real HTTP/2 (A27, A88): a Listener's inline route_config; a RouteConfiguration the
// server says does not exist; a route table with no virtual host for the target; and the errors A88 keeps out of a
// configuration the transport holds (a Listener deleted, a TP3 error on a RouteConfiguration), logged to the
// transport's logger, against a server marked `fail_on_data_errors`, where the same errors fail calls.
import { Code } from "@connectrpc/connect";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  LDS_TYPE_URL,
  type ManagementServer,
  RDS_TYPE_URL,
} from "@xdskit/control-plane";
import { createXdsClient, type XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient, served, untilServedBy } from "./support/echo-client.js";
import { bootstrapFor, clientFor, NODE_ID, simpleSnapshot, startControlPlane } from "./support/harness.js";
import { recordingLogger } from "./support/recording-logger.js";

/** Calls until one fails (at most `limit`), returning its error. */
async function untilFails(call: () => Promise<unknown>, limit = 400) {
  for (let i = 0; i < limit; i++) {
    const error = await call().then(
      () => undefined,
      (e: unknown) => e as { code: Code; rawMessage: string },
    );
    if (error !== undefined) return error;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`no call failed in ${limit}`);
}

describe("listeners and routes", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let a: Backend;
  let b: Backend;
  const transports: XdsTransport[] = [];

  beforeAll(async () => {
    server = await startControlPlane();
    [a, b] = await Promise.all([startBackend("a"), startBackend("b")]);
    client = clientFor(server);
    server.setResources([
      buildCluster({ name: "cluster-a" }),
      buildCluster({ name: "cluster-b" }),
      buildClusterLoadAssignment({ clusterName: "cluster-a", localities: [{ zone: "z", endpoints: [a.address] }] }),
      buildClusterLoadAssignment({ clusterName: "cluster-b", localities: [{ zone: "z", endpoints: [b.address] }] }),
    ]);
  });

  afterAll(async () => {
    await Promise.all(transports.map((t) => t.close()));
    await client.close();
    await Promise.all([a.close(), b.close(), server.close()]);
  });

  const transportFor = (name: string, on = client) => {
    const transport = createXdsTransport({ target: `xds:///${name}`, client: on });
    transports.push(transport);
    return echoClient(transport);
  };

  it("routes by a Listener's inline route_config, and follows a new inline route", async () => {
    const inline = (cluster: string) =>
      buildListener({ name: "inline", routeConfig: buildRouteConfiguration({ name: "inline-routes", cluster }) });
    server.setResource(inline("cluster-a"));
    const echo = transportFor("inline");
    expect(await served(echo)).toBe("a");
    server.setResource(inline("cluster-b"));
    await untilServedBy(echo, "b");
    // Nothing was asked over RDS.
    expect(client.dumpResources().genericXdsConfigs.filter((c) => c.typeUrl === RDS_TYPE_URL)).toEqual([]);
  });

  it("fails calls UNAVAILABLE naming a RouteConfiguration the server says does not exist, and the node", async () => {
    server.setResource(buildListener({ name: "no-route", routeConfigName: "missing-route" }));
    server.setResourceError(RDS_TYPE_URL, "missing-route", { code: Code.NotFound, message: "no such routes" });
    const error = await served(transportFor("no-route")).catch((e) => e);
    expect(error.code).toBe(Code.Unavailable);
    expect(error.rawMessage).toContain('RouteConfiguration "missing-route"');
    expect(error.rawMessage).toContain(NODE_ID);
  });

  it("fails calls UNAVAILABLE when no virtual host of the routes matches the target's name", async () => {
    server.setResources([
      buildListener({ name: "no-host", routeConfigName: "no-host-routes" }),
      buildRouteConfiguration({ name: "no-host-routes", cluster: "cluster-a", domains: ["elsewhere.example"] }),
    ]);
    const error = await served(transportFor("no-host")).catch((e) => e);
    expect(error.code).toBe(Code.Unavailable);
    expect(error.rawMessage).toContain('no virtual host matches "no-host"');
    expect(error.rawMessage).toContain('RouteConfiguration "no-host-routes"');
  });

  it("A88: keeps the last good configuration when the Listener is deleted or its routes get a TP3 error, logging both", async () => {
    server.setResources(simpleSnapshot("held", "cluster-a", [{ zone: "z", endpoints: [a.address] }]).slice(0, 2));
    // The transport makes its own client: the logger reaches it too.
    const log = recordingLogger();
    const transport = createXdsTransport({
      target: "xds:///held",
      bootstrap: bootstrapFor(server),
      logger: log.logger,
    });
    transports.push(transport);
    const echo = echoClient(transport);
    expect(await served(echo)).toBe("a");

    server.removeResource(LDS_TYPE_URL, "held");
    // xds-client's own line, then the transport's.
    await log.until(/held.*keeping the cached copy/);
    await log.until(/^\[connect-xds xds:\/\/\/held\].*held/);
    for (let i = 0; i < 3; i++) expect(await served(echo)).toBe("a");

    server.setResourceError(RDS_TYPE_URL, "held-route", { code: Code.NotFound, message: "routes withdrawn" });
    await log.until(/^\[connect-xds xds:\/\/\/held\].*routes withdrawn/);
    for (let i = 0; i < 3; i++) expect(await served(echo)).toBe("a");
  });

  it("with fail_on_data_errors, a deleted Listener and a TP3 NOT_FOUND on routes fail calls naming them", async () => {
    server.setResources([
      ...simpleSnapshot("strict-l", "cluster-a", [{ zone: "z", endpoints: [a.address] }]).slice(0, 2),
      ...simpleSnapshot("strict-r", "cluster-b", [{ zone: "z", endpoints: [b.address] }]).slice(0, 2),
    ]);
    const bootstrap = bootstrapFor(server);
    const strict = createXdsClient({
      bootstrap: {
        ...bootstrap,
        xds_servers: [{ ...bootstrap.xds_servers[0]!, server_features: ["fail_on_data_errors"] }],
      },
    });
    try {
      const byListener = transportFor("strict-l", strict);
      const byRoutes = transportFor("strict-r", strict);
      expect(await served(byListener)).toBe("a");
      expect(await served(byRoutes)).toBe("b");

      server.removeResource(LDS_TYPE_URL, "strict-l");
      const deleted = await untilFails(() => served(byListener));
      expect(deleted.code).toBe(Code.Unavailable);
      expect(deleted.rawMessage).toContain('Listener "strict-l"');

      server.setResourceError(RDS_TYPE_URL, "strict-r-route", { code: Code.NotFound, message: "routes withdrawn" });
      const withdrawn = await untilFails(() => served(byRoutes));
      expect(withdrawn.code).toBe(Code.Unavailable);
      expect(withdrawn.rawMessage).toContain('RouteConfiguration "strict-r-route"');
      expect(withdrawn.rawMessage).toContain("routes withdrawn");
    } finally {
      await Promise.all(transports.splice(0).map((t) => t.close()));
      await strict.close();
    }
  });
});
