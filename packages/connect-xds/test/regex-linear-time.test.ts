// Regular expressions from xDS run in time linear in the input (docs/decisions.md#regular-expressions-from-xds), over
// real HTTP/2 against the control plane. The patterns below are valid RE2 that a backtracking engine cannot finish
// on these inputs: JavaScript's RegExp took over 20 s on the path and ~0.7 s on 24 `a` for the header (each more `a`
// doubling it, so minutes for 34), all on the event loop that every call and xDS stream share.
import { monitorEventLoopDelay } from "node:perf_hooks";
import { create } from "@bufbuild/protobuf";
import { buildCluster, buildClusterLoadAssignment, buildListener, type ManagementServer } from "@xdskit/control-plane";
import { RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient, served } from "./support/echo-client.js";
import { clientFor, startControlPlane } from "./support/harness.js";

const toB = { case: "route" as const, value: { clusterSpecifier: { case: "cluster" as const, value: "cluster-b" } } };
const toA = { case: "route" as const, value: { clusterSpecifier: { case: "cluster" as const, value: "cluster-a" } } };

const routes = create(RouteConfigurationSchema, {
  name: "regex-routes",
  virtualHosts: [
    {
      domains: ["*"],
      routes: [
        // A path regex that never matches /xdskit.test.Echo/Unary (no Z), with three nested repeats.
        { match: { pathSpecifier: { case: "safeRegex", value: { regex: "(([a-zA-Z./]+)+)+Z" } } }, action: toB },
        {
          match: {
            pathSpecifier: { case: "prefix", value: "" },
            headers: [
              {
                name: "x-user",
                headerMatchSpecifier: {
                  case: "stringMatch",
                  value: { matchPattern: { case: "safeRegex", value: { regex: "(a+)+" } } },
                },
              },
            ],
          },
          action: toB,
        },
        { match: { pathSpecifier: { case: "prefix", value: "" } }, action: toA },
      ],
    },
  ],
});

describe("regular expressions from xDS", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let a: Backend;
  let b: Backend;
  let transport: XdsTransport;

  beforeAll(async () => {
    server = await startControlPlane();
    [a, b] = await Promise.all([startBackend("a"), startBackend("b")]);
    server.setSnapshot([
      buildListener({ name: "regex.example", routeConfigName: "regex-routes" }),
      routes,
      buildCluster({ name: "cluster-a" }),
      buildCluster({ name: "cluster-b" }),
      buildClusterLoadAssignment({ clusterName: "cluster-a", localities: [{ zone: "z", endpoints: [a.address] }] }),
      buildClusterLoadAssignment({ clusterName: "cluster-b", localities: [{ zone: "z", endpoints: [b.address] }] }),
    ]);
    client = clientFor(server);
    transport = createXdsTransport({ target: "xds:///regex.example", client });
  });

  afterAll(async () => {
    await transport.close();
    await client.close();
    await Promise.all([a.close(), b.close(), server.close()]);
  });

  it("routes past a backtracking path regex and header regex without stalling the event loop", async () => {
    const echo = echoClient(transport);
    await served(echo); // configuration in, connections up: what follows measures the matching
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    try {
      for (let i = 0; i < 20; i++) {
        // 34 `a` and a `!`: the header regex does not match, the path regex does not either.
        expect(await served(echo, { headers: { "x-user": `${"a".repeat(34)}!` } })).toBe("a");
        // The same header regex matching, to show the route is live.
        expect(await served(echo, { headers: { "x-user": "a".repeat(34) } })).toBe("b");
      }
    } finally {
      delay.disable();
    }
    // A backtracking engine holds the loop for seconds to minutes per call; RE2's matching for microseconds. The
    // bound leaves room for a loaded machine's scheduling and garbage collection, orders of magnitude below that.
    expect(delay.max / 1e6).toBeLessThan(2_000);
  });
});
