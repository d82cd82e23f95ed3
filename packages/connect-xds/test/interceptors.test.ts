// The `interceptors` option over real HTTP/2: interceptors wrap each call in connect's order (the first outermost),
// see the call's method and url, and run before routing, so a header one sets picks the route. Listener
// `intercepted`: calls with `x-route: b` go to cluster b, the rest to cluster a.
import { create } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { buildCluster, buildClusterLoadAssignment, buildListener, type ManagementServer } from "@xdskit/control-plane";
import { RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient } from "./support/echo-client.js";
import { clientFor, startControlPlane } from "./support/harness.js";

const toCluster = (cluster: string, headers: object[] = []) => ({
  match: { pathSpecifier: { case: "prefix" as const, value: "" }, headers },
  action: { case: "route" as const, value: { clusterSpecifier: { case: "cluster" as const, value: cluster } } },
});

describe("interceptors", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let a: Backend;
  let b: Backend;

  beforeAll(async () => {
    [server, a, b] = await Promise.all([startControlPlane(), startBackend("a"), startBackend("b")]);
    server.setSnapshot([
      buildListener({ name: "intercepted", routeConfigName: "intercepted-route" }),
      create(RouteConfigurationSchema, {
        name: "intercepted-route",
        virtualHosts: [
          {
            name: "all",
            domains: ["*"],
            routes: [
              toCluster("cluster-b", [
                {
                  name: "x-route",
                  headerMatchSpecifier: { case: "stringMatch", value: { matchPattern: { case: "exact", value: "b" } } },
                },
              ]),
              toCluster("cluster-a"),
            ],
          },
        ],
      }),
      buildCluster({ name: "cluster-a" }),
      buildCluster({ name: "cluster-b" }),
      buildClusterLoadAssignment({ clusterName: "cluster-a", localities: [{ zone: "z", endpoints: [a.address] }] }),
      buildClusterLoadAssignment({ clusterName: "cluster-b", localities: [{ zone: "z", endpoints: [b.address] }] }),
    ]);
    client = clientFor(server);
  });
  afterAll(async () => {
    await client.close();
    await Promise.all([a.close(), b.close(), server.close()]);
  });

  it("wraps unary and streaming calls, first interceptor outermost, before routing", async () => {
    const seen: string[] = [];
    const outer: Interceptor = (next) => async (req) => {
      seen.push(`outer ${req.stream ? "stream" : "unary"} ${req.url}`);
      req.header.set("x-route", "b");
      const res = await next(req);
      seen.push(`outer got ${res.header.get("content-type")}`);
      return res;
    };
    const inner: Interceptor = (next) => async (req) => {
      seen.push(`inner ${req.method.name} x-route=${req.header.get("x-route")}`);
      return next(req);
    };
    const transport = createXdsTransport({ target: "xds:///intercepted", client, interceptors: [outer, inner] });
    try {
      const echo = echoClient(transport);
      expect((await echo.unary({ value: "x" })).value).toBe("b:x");
      const streamed: string[] = [];
      for await (const message of echo.serverStream({ value: "s" })) streamed.push(message.value);
      expect(streamed).toEqual(["b:s:0", "b:s:1", "b:s:2"]);
      expect(seen).toEqual([
        "outer unary xds:///intercepted/xdskit.test.Echo/Unary",
        "inner Unary x-route=b",
        "outer got application/grpc+proto",
        "outer stream xds:///intercepted/xdskit.test.Echo/ServerStream",
        "inner ServerStream x-route=b",
        "outer got application/grpc+proto",
      ]);
      // Without the interceptor the same call goes to cluster a.
      const plain = createXdsTransport({ target: "xds:///intercepted", client });
      expect((await echoClient(plain).unary({ value: "y" })).value).toBe("a:y");
      await plain.close();
    } finally {
      await transport.close();
    }
  });
});
