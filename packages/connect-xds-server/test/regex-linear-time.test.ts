// Regexes from xDS on the server, where the input is a peer's: the route's header matcher and an RBAC policy's
// header regex run on what any client sends, over real HTTP/2 against the control plane. The patterns are valid RE2
// that JavaScript's backtracking RegExp cannot finish on these values (each more `a` doubles its time: 34 take
// minutes), and all of it on the event loop every connection shares. xds-client's RE2 engine decides them at once
// (docs/decisions.md#regular-expressions-from-xds).
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ManagementServer } from "@xdskit/control-plane";
import { afterEach, beforeEach, expect, it } from "vitest";
import { echoClient } from "./support/echo-service.js";
import { plaintextTransport, type StartedServer, serving, startControlPlane, startServer } from "./support/harness.js";
import { type RouteInit, rbacFilter, rbacRules, serverListener, serverRoutes } from "./support/server-listener.js";

const stringRegex = (name: string, regex: string) => ({
  name,
  headerMatchSpecifier: {
    case: "stringMatch" as const,
    value: { matchPattern: { case: "safeRegex" as const, value: { regex } } },
  },
});

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

it("routes and authorizes calls past backtracking header regexes without stalling the event loop", async () => {
  started = await startServer(controlPlane);
  const { name, host, port } = started;
  // Only calls whose x-route is all `a` have a route; RBAC denies those whose x-user is all `b`.
  const onlyA: RouteInit = {
    match: { pathSpecifier: { case: "prefix", value: "" }, headers: [stringRegex("x-route", "(a+)+")] },
    action: { case: "nonForwardingAction", value: {} },
  };
  const routes = serverRoutes("regex-routes", [onlyA]);
  const deny = rbacRules("DENY", {
    "all-b": {
      permissions: [{ rule: { case: "any", value: true } }],
      principals: [{ identifier: { case: "header", value: stringRegex("x-user", "(b|bb)+") } }],
    },
  });
  controlPlane.setResource(
    serverListener({ name, host, port, filterChains: [{ routes, httpFilters: [rbacFilter(deny)] }] }),
  );
  await started.statuses.until(serving);
  const calls = echoClient(plaintextTransport(host, port).transport);
  const codeOf = (headers: Record<string, string>) =>
    calls.unary({ value: "x" }, { headers }).then(
      () => "OK",
      (error) => Code[ConnectError.from(error).code],
    );
  const a = "a".repeat(34);
  const b = "b".repeat(60);
  // Warm: connection up, configuration applied.
  expect(await codeOf({ "x-route": a, "x-user": "lisa" })).toBe("OK");

  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  try {
    for (let i = 0; i < 10; i++) {
      expect(await codeOf({ "x-route": `${a}!`, "x-user": "lisa" })).toBe("Unavailable"); // no route
      expect(await codeOf({ "x-route": a, "x-user": `${b}!` })).toBe("OK"); // not denied
      expect(await codeOf({ "x-route": a, "x-user": b })).toBe("PermissionDenied");
    }
  } finally {
    delay.disable();
  }
  // A backtracking engine holds the loop for minutes per call; the bound leaves a loaded machine's scheduling and
  // garbage collection orders of magnitude of room below that.
  expect(delay.max / 1e6).toBeLessThan(2_000);
});
