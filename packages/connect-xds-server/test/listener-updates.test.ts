// A36's updates over real HTTP/2: a Listener change drains the connections made under the previous one (the call in
// flight finishes, the next call opens a new connection and sees the new configuration); an RDS change reaches open
// connections without a drain; a new Listener is applied only once its RDS resources are in; a broken RDS resource
// fails every call of its chains UNAVAILABLE and is logged once until it recovers.
import { Code, ConnectError } from "@connectrpc/connect";
import type { ManagementServer } from "@xdskit/control-plane";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { echoClient } from "./support/echo-service.js";
import {
  memoryLogger,
  plaintextTransport,
  type StartedServer,
  serving,
  startControlPlane,
  startServer,
} from "./support/harness.js";
import { nonForwardingRoute, serverListener, serverRoutes } from "./support/server-listener.js";

const RDS = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";

/** A route that matches every path but forwards to a cluster: calls that match it must fail UNAVAILABLE. */
const forwardingRoute = (name: string) => ({
  name,
  match: { pathSpecifier: { case: "prefix" as const, value: "" } },
  action: { case: "route" as const, value: { clusterSpecifier: { case: "cluster" as const, value: "somewhere" } } },
});

/** Resolves with `value` of a successful unary call, or with the error's code and message. */
async function outcome(call: Promise<{ value: string }>): Promise<string> {
  try {
    return (await call).value;
  } catch (error) {
    const e = ConnectError.from(error);
    return `${Code[e.code]}: ${e.rawMessage}`;
  }
}

describe("Listener and RDS updates (A36)", () => {
  let controlPlane: ManagementServer;
  let started: StartedServer | undefined;

  beforeEach(async () => {
    controlPlane = await startControlPlane();
  });
  afterEach(async () => {
    await started?.server.close();
    started = undefined;
    await controlPlane.close();
  });

  it("drains connections on a Listener change: the call in flight completes, the next call uses a new connection", async () => {
    // 1. Listener v1 (inline routes, every call served); a call is held in flight on the one connection.
    // 2. Listener v2 whose inline routes forward (every call UNAVAILABLE): the old connection gets GOAWAY.
    // 3. The held call completes on the old connection; a new call opens a second connection and meets v2's routes.
    started = await startServer(controlPlane);
    const { host, port, name, echo } = started;
    controlPlane.setResource(serverListener({ name, host, port }));
    await started.statuses.until(serving);
    const { transport, connections } = plaintextTransport(host, port);
    const calls = echoClient(transport);
    expect(await calls.unary({ value: "v1" })).toMatchObject({ value: "echo:v1" });
    const held = calls.held({ value: "across" });
    await echo.heldArrived();

    controlPlane.setResource(
      serverListener({
        name,
        host,
        port,
        filterChains: [{ routes: serverRoutes("v2", [forwardingRoute("v2-route")]) }],
      }),
    );
    // The GOAWAY reaches the client before the update's effects can be seen: wait for a call that meets v2.
    let after = "";
    for (let attempt = 0; attempt < 50 && !after.startsWith("Unavailable"); attempt++) {
      after = await outcome(calls.unary({ value: "v2" }));
    }
    expect(after).toBe(
      `Unavailable: the call matched route v2-vh/v2-route, whose action is not non_forwarding_action (xDS node ID "connect-xds-server-test")`,
    );
    expect(connections()).toBe(2);
    echo.release();
    expect(await held).toMatchObject({ value: "held:across" });
    expect(started.statuses.all).toEqual([{ serving: true }]);
  });

  it("closes a drained connection by force once drainGraceMs has passed, failing the call still in flight", async () => {
    started = await startServer(controlPlane, { drainGraceMs: 200 });
    const { host, port, name, echo } = started;
    controlPlane.setResource(serverListener({ name, host, port }));
    await started.statuses.until(serving);
    const calls = echoClient(plaintextTransport(host, port).transport);
    const held = outcome(calls.held({ value: "cut" }));
    await echo.heldArrived();
    controlPlane.setResource(serverListener({ name, host, port, filterChains: [{ name: "v2" }] }));
    // The handler never answers: only the forced close ends the call.
    expect(await held).toMatch(/^(Unavailable|Internal|Canceled|Unknown): /);
    expect(await calls.unary({ value: "next" })).toMatchObject({ value: "echo:next" });
    echo.release();
  });

  it("keeps a drained connection's call through a drainGraceMs past Node's timer limit (30 days)", async () => {
    started = await startServer(controlPlane, { drainGraceMs: 30 * 24 * 60 * 60 * 1000 });
    const { host, port, name, echo } = started;
    controlPlane.setResource(serverListener({ name, host, port }));
    await started.statuses.until(serving);
    const calls = echoClient(plaintextTransport(host, port).transport);
    const held = calls.held({ value: "long" });
    await echo.heldArrived();
    controlPlane.setResource(
      serverListener({ name, host, port, filterChains: [{ routes: serverRoutes("v2", [forwardingRoute("v2")]) }] }),
    );
    // Once a new connection meets v2, the old one has been drained for a while: a timer that overflowed would have
    // fired after 1 ms and cut the call.
    let after = "";
    for (let attempt = 0; attempt < 50 && !after.startsWith("Unavailable"); attempt++) {
      after = await outcome(echoClient(plaintextTransport(host, port).transport).unary({ value: "v2" }));
    }
    expect(after).toMatch(/^Unavailable: /);
    echo.release();
    expect(await held).toMatchObject({ value: "held:long" });
  });

  it("applies an RDS change to open connections without draining them", async () => {
    started = await startServer(controlPlane);
    const { host, port, name, echo } = started;
    controlPlane.setResources([
      serverRoutes("routes"),
      serverListener({ name, host, port, filterChains: [{ routeConfigName: "routes" }] }),
    ]);
    await started.statuses.until(serving);
    const { transport, connections } = plaintextTransport(host, port);
    const calls = echoClient(transport);
    expect(await calls.unary({ value: "before" })).toMatchObject({ value: "echo:before" });
    const held = calls.held({ value: "kept" });
    await echo.heldArrived();

    controlPlane.setResource(serverRoutes("routes", [forwardingRoute("now-forwarding")]));
    let after = "";
    for (let attempt = 0; attempt < 200 && !after.startsWith("Unavailable"); attempt++) {
      after = await outcome(calls.unary({ value: "after" }));
    }
    expect(after).toMatch(/^Unavailable: the call matched route routes-vh\/now-forwarding/);
    // Same connection throughout: an RDS change is not a Listener change.
    expect(connections()).toBe(1);
    echo.release();
    expect(await held).toMatchObject({ value: "held:kept" });
    expect(connections()).toBe(1);
  });

  it("applies a new Listener only once its RDS resource is in; the previous one serves meanwhile", async () => {
    const logger = memoryLogger();
    started = await startServer(controlPlane, { logger });
    const { host, port, name } = started;
    // Not serving at all until the first Listener's RDS arrives.
    controlPlane.setResource(serverListener({ name, host, port, filterChains: [{ routeConfigName: "first" }] }));
    const waiting = started.server.servingStatus();
    expect(waiting.serving).toBe(false);
    controlPlane.setResource(serverRoutes("first"));
    await started.statuses.until(serving);

    // A second Listener naming an RDS resource the control plane does not have yet: v1 keeps serving new connections.
    controlPlane.setResource(
      serverListener({ name, host, port, filterChains: [{ routeConfigName: "second", name: "second-chain" }] }),
    );
    const fresh = () => echoClient(plaintextTransport(host, port).transport).unary({ value: "x" });
    expect(await fresh()).toMatchObject({ value: "echo:x" });
    controlPlane.setResource(serverRoutes("second", [forwardingRoute("second-route")]));
    let after = "";
    for (let attempt = 0; attempt < 200 && !after.startsWith("Unavailable"); attempt++) after = await outcome(fresh());
    expect(after).toMatch(/^Unavailable: the call matched route second-vh\/second-route/);
    expect(started.statuses.all).toEqual([{ serving: true }]);
  });

  it("fails every call of a chain whose RDS resource was never good, logs it once, and recovers", async () => {
    // 1. The Listener names RDS "routes", served invalid (a regex RE2 refuses): NACKed without a good version, so
    //    the Listener is applied (its RDS failed) and every call on its chain fails UNAVAILABLE.
    // 2. A second invalid version: still failing, not logged again.
    // 3. A valid version: calls are served, and one line says so.
    const logger = memoryLogger();
    started = await startServer(controlPlane, { logger });
    const { host, port, name } = started;
    const invalid = (regex: string) =>
      serverRoutes("routes", [
        {
          match: { pathSpecifier: { case: "safeRegex", value: { regex } } },
          action: { case: "nonForwardingAction", value: {} },
        },
      ]);
    controlPlane.setResources([
      invalid("("),
      serverListener({ name, host, port, filterChains: [{ routeConfigName: "routes" }] }),
    ]);
    await started.statuses.until(serving);
    const calls = echoClient(plaintextTransport(host, port).transport);
    expect(await outcome(calls.unary({ value: "broken" }))).toMatch(
      /^Unavailable: RouteConfiguration routes is unusable: .*\(xDS node ID "connect-xds-server-test"\)$/,
    );
    const broken = (line: string) => line.includes("RouteConfiguration routes is unusable");
    expect(logger.lines.filter(broken)).toHaveLength(1);

    controlPlane.setResource(invalid("["));
    controlPlane.setResource(serverRoutes("routes", [nonForwardingRoute()]));
    let back = "";
    for (let attempt = 0; attempt < 200 && back !== "echo:back"; attempt++)
      back = await outcome(calls.unary({ value: "back" }));
    expect(back).toBe("echo:back");
    expect(logger.lines.filter(broken)).toHaveLength(1);
    expect(logger.lines.filter((line) => line.includes("RouteConfiguration routes is usable again"))).toHaveLength(1);
    expect(started.statuses.all).toEqual([{ serving: true }]);
  });

  it("fails the calls of a chain whose RDS resource the control plane replaces with an error (TP3, fail_on_data_errors)", async () => {
    started = await startServer(controlPlane, { failOnDataErrors: true });
    const { host, port, name } = started;
    controlPlane.setResources([
      serverRoutes("routes"),
      serverListener({ name, host, port, filterChains: [{ routeConfigName: "routes" }] }),
    ]);
    await started.statuses.until(serving);
    const calls = echoClient(plaintextTransport(host, port).transport);
    expect(await calls.unary({ value: "ok" })).toMatchObject({ value: "echo:ok" });
    controlPlane.setResourceError(RDS, "routes", { code: Code.PermissionDenied, message: "not for you" });
    let after = "";
    for (let attempt = 0; attempt < 200 && !after.startsWith("Unavailable"); attempt++) {
      after = await outcome(calls.unary({ value: "gone" }));
    }
    expect(after).toMatch(/^Unavailable: RouteConfiguration routes is unusable: \[PERMISSION_DENIED\] .*not for you/);
  });

  it("logs routes whose action is not non_forwarding_action on every update that has them", async () => {
    const logger = memoryLogger();
    started = await startServer(controlPlane, { logger });
    const { host, port, name } = started;
    controlPlane.setResources([
      serverRoutes("routes", [nonForwardingRoute("/xdskit.test.Echo/Unary"), forwardingRoute("fwd")]),
      serverListener({ name, host, port, filterChains: [{ routeConfigName: "routes" }] }),
    ]);
    await started.statuses.until(serving);
    const calls = echoClient(plaintextTransport(host, port).transport);
    expect(await calls.unary({ value: "a" })).toMatchObject({ value: "echo:a" });
    expect(await outcome(calls.held({ value: "b" }))).toMatch(/^Unavailable: the call matched route routes-vh\/fwd,/);
    expect(
      logger.lines.filter((line) => line.includes("routes routes-vh/fwd are not non_forwarding_action")),
    ).toHaveLength(1);
  });
});
