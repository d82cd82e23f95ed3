// Aggregate and LOGICAL_DNS clusters (A37, A75) over real HTTP/2 with the control plane: a LOGICAL_DNS cluster of
// `localhost:<port>` resolved by Node's resolver, an aggregate whose EDS priority fails over to that DNS cluster and
// back, and graphs the transport refuses.
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { buildCluster, buildClusterLoadAssignment, type ManagementServer } from "@xdskit/control-plane";
import { type Cluster, Cluster_DiscoveryType, ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { ClusterConfigSchema } from "@xdskit/protos/envoy/extensions/clusters/aggregate/v3/cluster_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { createXdsTransportWithInternals } from "../src/internal.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient, served, untilServedBy } from "./support/echo-client.js";
import { clientFor, simpleSnapshot, startControlPlane } from "./support/harness.js";

/** A LOGICAL_DNS cluster resolving `host:port`. */
function dnsCluster(name: string, host: string, port: number): Cluster {
  return create(ClusterSchema, {
    name,
    clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.LOGICAL_DNS },
    loadAssignment: {
      clusterName: name,
      endpoints: [
        {
          lbEndpoints: [
            {
              hostIdentifier: {
                case: "endpoint",
                value: {
                  address: {
                    address: {
                      case: "socketAddress",
                      value: { address: host, portSpecifier: { case: "portValue", value: port } },
                    },
                  },
                },
              },
            },
          ],
        },
      ],
    },
  });
}

/** An aggregate cluster over `clusters`, in priority order. */
function aggregateCluster(name: string, clusters: string[]): Cluster {
  return create(ClusterSchema, {
    name,
    clusterDiscoveryType: {
      case: "clusterType",
      value: {
        name: "envoy.clusters.aggregate",
        typedConfig: anyPack(ClusterConfigSchema, create(ClusterConfigSchema, { clusters })),
      },
    },
  });
}

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
    const echo = route("dns", "dns-cluster", [dnsCluster("dns-cluster", "localhost", a.port)]);
    for (let i = 0; i < 3; i++) expect(await served(echo)).toBe("a");
  });

  it("resolves a DNS cluster's name again when its connection fails, and uses the new address", async () => {
    // The first answer is an address where nothing listens; the next ones are the backend's.
    const answers = ["127.0.0.2", "127.0.0.1"];
    const lookups: string[] = [];
    const resources = [dnsCluster("redns-cluster", "backend.test", a.port)];
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
      aggregateCluster("agg-cluster", ["primary", "fallback"]),
      buildCluster({ name: "primary" }),
      eds([]),
      dnsCluster("fallback", "localhost", b.port),
    ]);
    for (let i = 0; i < 3; i++) expect(await served(echo)).toBe("b");
    server.setResource(eds([a.address]));
    await untilServedBy(echo, "a");
    for (let i = 0; i < 3; i++) expect(await served(echo)).toBe("a");
  });

  it("fails calls UNAVAILABLE naming the loop when an aggregate graph loops", async () => {
    const echo = route("loop", "loop-a", [
      aggregateCluster("loop-a", ["loop-b"]),
      aggregateCluster("loop-b", ["loop-a"]),
    ]);
    await expect(served(echo)).rejects.toMatchObject({ code: 14, message: expect.stringContaining("has a loop") });
  });
});
