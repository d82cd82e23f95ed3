import {
  buildAggregateCluster,
  buildCluster,
  buildClusterLoadAssignment,
  buildLogicalDnsCluster,
  type ManagementServer,
} from "@xdskit/control-plane";
import type { Cluster } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { createXdsTransportWithInternals } from "../src/internal.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient, served, untilServedBy } from "./support/echo-client.js";
import { clientFor, simpleSnapshot, startControlPlane } from "./support/harness.js";

describe("aggregate and LOGICAL_DNS clusters", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let a: Backend;
  let b: Backend;
  const transports: XdsTransport[] = [];

  /** Listener and route `name` to cluster `cluster` (the other resources are the test's). */
  function route(
    name: string,
    cluster: string,
    resources: readonly (Cluster | ReturnType<typeof buildClusterLoadAssignment>)[],
  ) {
    const [listener, routeConfig] = simpleSnapshot(name, cluster, []);
    for (const resource of [listener!, routeConfig!, ...resources]) server.setResource(resource);
    const transport = createXdsTransport({ target: `xds:///${name}`, client });
    transports.push(transport);
    return echoClient(transport);
  }

  beforeAll(async () => {
    server = await startControlPlane();
    client = clientFor(server);
    [a, b] = await Promise.all([startBackend("a"), startBackend("b")]);
  });
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
  });
  afterAll(async () => {
    await client.close();
    await Promise.all([a.close(), b.close(), server.close()]);
  });

  it("sends calls to the address Node's resolver gives for a LOGICAL_DNS cluster of localhost:<port>", async () => {
    // localhost may resolve to ::1 first, where nothing listens: the endpoint's next address is tried (A61).
    const echo = route("dns", "dns-cluster", [
      buildLogicalDnsCluster({ name: "dns-cluster", host: "localhost", port: a.port }),
    ]);
    for (let i = 0; i < 3; i++) expect(await served(echo)).toBe("a");
  });

  it("resolves a DNS cluster's name again when its connection fails, and uses the new address", async () => {
    // The first answer is an address where nothing listens; the next ones are the backend's.
    const answers = ["127.0.0.2", "127.0.0.1"];
    const lookups: string[] = [];
    const resources = [buildLogicalDnsCluster({ name: "redns-cluster", host: "backend.test", port: a.port })];
    const [listener, routeConfig] = simpleSnapshot("redns", "redns-cluster", []);
    for (const resource of [listener!, routeConfig!, ...resources]) server.setResource(resource);
    const transport = createXdsTransportWithInternals(
      { target: "xds:///redns", client },
      {
        dns: {
          minIntervalMs: 0,
          lookup: async (host) => {
            lookups.push(host);
            return [{ address: answers.length > 1 ? answers.shift()! : answers[0]!, family: 4 }];
          },
        },
      },
    );
    transports.push(transport);
    const echo = echoClient(transport);
    await untilServedBy(echo, "a");
    expect(lookups.length).toBeGreaterThanOrEqual(2);
    expect(new Set(lookups)).toEqual(new Set(["backend.test"]));
  });

  it("fails over from an aggregate's EDS cluster with no endpoints to its DNS cluster, and back (A75)", async () => {
    const eds = (endpoints: string[]) =>
      buildClusterLoadAssignment({ clusterName: "primary", localities: [{ zone: "z", endpoints }] });
    const echo = route("agg", "agg-cluster", [
      buildAggregateCluster({ name: "agg-cluster", clusters: ["primary", "fallback"] }),
      buildCluster({ name: "primary" }),
      eds([]),
      buildLogicalDnsCluster({ name: "fallback", host: "localhost", port: b.port }),
    ]);
    for (let i = 0; i < 3; i++) expect(await served(echo)).toBe("b");
    server.setResource(eds([a.address]));
    await untilServedBy(echo, "a");
    for (let i = 0; i < 3; i++) expect(await served(echo)).toBe("a");
  });

  it("fails calls UNAVAILABLE naming the loop when an aggregate graph loops", async () => {
    const echo = route("loop", "loop-a", [
      buildAggregateCluster({ name: "loop-a", clusters: ["loop-b"] }),
      buildAggregateCluster({ name: "loop-b", clusters: ["loop-a"] }),
    ]);
    await expect(served(echo)).rejects.toMatchObject({ code: 14, message: expect.stringContaining("has a loop") });
  });
});
