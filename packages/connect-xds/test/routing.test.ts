// Routing (A28, A63) over real HTTP/2: path and header matchers, weighted clusters, virtual hosts, routes without a
// supported action. Two clusters, each with one backend that answers with its name.
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { buildCluster, buildClusterLoadAssignment, buildListener, type ManagementServer } from "@xdskit/control-plane";
import { RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { XdsTransport } from "../src/index.js";
import { createXdsTransportWithInternals } from "../src/internal.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient, otherClient, served } from "./support/echo-client.js";
import { clientFor, startControlPlane } from "./support/harness.js";

const route = (match: object, cluster: string | { a: number; b: number }) => ({
  match,
  action: {
    case: "route" as const,
    value: {
      clusterSpecifier:
        typeof cluster === "string"
          ? { case: "cluster" as const, value: cluster }
          : {
              case: "weightedClusters" as const,
              value: {
                clusters: [
                  { name: "cluster-a", weight: cluster.a },
                  { name: "cluster-b", weight: cluster.b },
                ],
              },
            },
    },
  },
});

const routes = create(RouteConfigurationSchema, {
  name: "routes",
  virtualHosts: [
    {
      name: "other-host",
      domains: ["other.example"],
      routes: [route({ pathSpecifier: { case: "prefix", value: "" } }, "cluster-a")],
    },
    {
      name: "main",
      domains: ["routed*"],
      routes: [
        route({ pathSpecifier: { case: "path", value: "/xdskit.test.Echo/ServerStream" } }, "cluster-b"),
        route({ pathSpecifier: { case: "prefix", value: "/XDSKIT.TEST.OTHER/" }, caseSensitive: false }, "cluster-b"),
        route(
          {
            pathSpecifier: { case: "prefix", value: "" },
            headers: [
              {
                name: "x-group",
                headerMatchSpecifier: {
                  case: "stringMatch",
                  value: { matchPattern: { case: "exact", value: "canary" } },
                },
              },
            ],
          },
          "cluster-b",
        ),
        route(
          {
            pathSpecifier: { case: "safeRegex", value: { regex: "/xdskit\\.test\\.Echo/Un.*" } },
            headers: [
              { name: "x-version", headerMatchSpecifier: { case: "rangeMatch", value: { start: 10n, end: 20n } } },
              { name: "x-skip", headerMatchSpecifier: { case: "presentMatch", value: true }, invertMatch: true },
            ],
          },
          { a: 1, b: 3 },
        ),
        {
          match: {
            pathSpecifier: { case: "prefix", value: "/xdskit.test.Echo/Unary" },
            headers: [{ name: "x-redirect", headerMatchSpecifier: { case: "presentMatch", value: true } }],
          },
          action: { case: "redirect", value: { hostRedirect: "elsewhere" } },
        },
        route({ pathSpecifier: { case: "prefix", value: "/xdskit.test.Echo/" } }, "cluster-a"),
      ],
    },
  ],
});

describe("routing", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let a: Backend;
  let b: Backend;
  let transport: XdsTransport;
  let draw = 0;

  beforeAll(async () => {
    server = await startControlPlane();
    [a, b] = await Promise.all([startBackend("a"), startBackend("b")]);
    server.setSnapshot([
      buildListener({ name: "routed.example", routeConfigName: "routes" }),
      routes,
      buildCluster({ name: "cluster-a" }),
      buildCluster({ name: "cluster-b" }),
      buildClusterLoadAssignment({ clusterName: "cluster-a", localities: [{ zone: "z", endpoints: [a.address] }] }),
      buildClusterLoadAssignment({ clusterName: "cluster-b", localities: [{ zone: "z", endpoints: [b.address] }] }),
    ]);
    client = clientFor(server);
    // Draws spread evenly over [0, 1), so a weighted split is exact.
    transport = createXdsTransportWithInternals(
      { target: "xds:///routed.example", client },
      { random: () => ((draw++ % 100) + 0.5) / 100 },
    );
  });

  afterAll(async () => {
    await transport.close();
    await client.close();
    await Promise.all([a.close(), b.close(), server.close()]);
  });

  it("matches an exact path and a case-insensitive prefix", async () => {
    const echo = echoClient(transport);
    const names: string[] = [];
    for await (const message of echo.serverStream({ value: "s" })) names.push(message.value.split(":")[0]!);
    expect(names).toEqual(["b", "b", "b"]);
    expect((await otherClient(transport).call({ value: "x" })).value).toBe("b:x");
  });

  it("matches a header's exact value", async () => {
    const echo = echoClient(transport);
    expect(await served(echo, { headers: { "x-group": "canary" } })).toBe("b");
    expect(await served(echo, { headers: { "x-group": "stable" } })).toBe("a");
  });

  it("splits a weighted route 1:3 when its regex, range and inverted present matchers all match", async () => {
    const echo = echoClient(transport);
    const counts = { a: 0, b: 0 };
    draw = 0;
    for (let i = 0; i < 100; i++) counts[(await served(echo, { headers: { "x-version": "15" } })) as "a" | "b"]++;
    expect(counts).toEqual({ a: 25, b: 75 });
    // Out of range, or x-skip present: the route does not match and the last route (cluster-a) does.
    for (let i = 0; i < 10; i++) expect(await served(echo, { headers: { "x-version": "20" } })).toBe("a");
    for (let i = 0; i < 10; i++)
      expect(await served(echo, { headers: { "x-version": "15", "x-skip": "1" } })).toBe("a");
  });

  it("fails a call whose route has no supported action with UNAVAILABLE", async () => {
    const error = await served(echoClient(transport), { headers: { "x-redirect": "1" } }).catch((e) => e);
    expect(error.code).toBe(Code.Unavailable);
    expect(error.rawMessage).toContain("no supported action");
  });

  it("fails a call that no route matches with UNAVAILABLE", async () => {
    const other = createXdsTransportWithInternals({ target: "xds:///routed.example", client }, {});
    try {
      // The main virtual host has no route for the Other service except the case-insensitive one: use a path no
      // route takes by asking a transport whose listener's routes are replaced below.
      server.setResource(
        create(RouteConfigurationSchema, {
          name: "routes",
          virtualHosts: [
            {
              name: "main",
              domains: ["*"],
              routes: [route({ pathSpecifier: { case: "path", value: "/a/b" } }, "cluster-a")],
            },
          ],
        }),
      );
      let error: { code?: number; rawMessage?: string } = {};
      for (let i = 0; i < 200 && error.code !== Code.Unavailable; i++) {
        error = await served(echoClient(other)).then(
          () => ({}),
          (e) => e,
        );
      }
      expect(error.code).toBe(Code.Unavailable);
      expect(error.rawMessage).toContain("no route matched the call to /xdskit.test.Echo/Unary");
    } finally {
      server.setResource(routes);
      await other.close();
    }
  });
});
