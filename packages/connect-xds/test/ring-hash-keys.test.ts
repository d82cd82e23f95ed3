// A76's endpoint hash keys over real HTTP/2: EDS gives each endpoint an `envoy.lb` `hash_key`; ring_hash places the
// endpoint by it, not by its address. When the keys move to other addresses (pods restarted elsewhere), every
// session follows its key; placed by address, the sessions would stay where they were.
import { create } from "@bufbuild/protobuf";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  type ManagementServer,
} from "@xdskit/control-plane";
import { Cluster_LbPolicy } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { MetadataSchema } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { RouteAction_HashPolicySchema } from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient } from "./support/echo-client.js";
import { clientFor, startControlPlane } from "./support/harness.js";

const SESSIONS = Array.from({ length: 8 }, (_, i) => `session-${i}`);

describe("ring_hash endpoint hash keys (A76) over HTTP/2", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let backends: Backend[];

  /** The assignment with backend i keyed `keys[i]`. */
  function assignment(keys: readonly string[]) {
    const cla = buildClusterLoadAssignment({
      clusterName: "pods-cluster",
      localities: [{ zone: "z", endpoints: backends.map((b) => b.address) }],
    });
    cla.endpoints[0]?.lbEndpoints.forEach((lbEndpoint, i) => {
      lbEndpoint.metadata = create(MetadataSchema, { filterMetadata: { "envoy.lb": { hash_key: keys[i] as string } } });
    });
    return cla;
  }

  beforeAll(async () => {
    server = await startControlPlane();
    backends = await Promise.all(["a", "b", "c"].map((name) => startBackend(name)));
    const cluster = buildCluster({ name: "pods-cluster" });
    cluster.lbPolicy = Cluster_LbPolicy.RING_HASH;
    const route = buildRouteConfiguration({ name: "pods-route", cluster: "pods-cluster" });
    const action = route.virtualHosts[0]?.routes[0]?.action;
    if (action?.case !== "route") throw new Error("route action expected");
    action.value.hashPolicy = [
      create(RouteAction_HashPolicySchema, { policySpecifier: { case: "header", value: { headerName: "x-session" } } }),
    ];
    server.setSnapshot([
      buildListener({ name: "pods", routeConfigName: "pods-route" }),
      route,
      cluster,
      assignment(["pod-a", "pod-b", "pod-c"]),
    ]);
    client = clientFor(server);
  });
  afterAll(async () => {
    await client.close();
    await Promise.all([...backends.map((b) => b.close()), server.close()]);
  });

  it("places endpoints by their hash_key: when the keys move to other addresses, each session follows its key", async () => {
    const transport = createXdsTransport({ target: "xds:///pods", client });
    try {
      const echo = echoClient(transport);
      const servedBy = async (session: string) =>
        (await echo.unary({ value: session }, { headers: { "x-session": session } })).value.split(":")[0] as string;
      // Backend x carries pod-x: a session's backend names its pod.
      const podOf = new Map<string, string>();
      for (const session of SESSIONS) podOf.set(session, `pod-${await servedBy(session)}`);
      // Every key moves to another address: a carries pod-b, b pod-c, c pod-a.
      server.setSnapshot([assignment(["pod-b", "pod-c", "pod-a"])]);
      const backendOf = (pod: string) => ({ "pod-b": "a", "pod-c": "b", "pod-a": "c" })[pod];
      const first = SESSIONS[0] as string;
      // The new assignment is applied once the first session moves (calls, no sleeps, until it does).
      let moved = false;
      for (let tries = 0; tries < 500 && !moved; tries++) {
        moved = (await servedBy(first)) === backendOf(podOf.get(first) as string);
      }
      expect(moved).toBe(true);
      for (const session of SESSIONS) {
        expect(await servedBy(session)).toBe(backendOf(podOf.get(session) as string));
      }
    } finally {
      await transport.close();
    }
  });
});
