// The four resource types end to end: a listener → route configuration → cluster → endpoints chain served by
// @xdskit/control-plane over real HTTP/2 and followed the way a gRPC channel does (each update names the next
// resource to watch); then an invalid cluster is NACKed with its field path and the valid one stays in use.
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  createManagementServer,
  type ManagementServer,
} from "@xdskit/control-plane";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type ClusterUpdate,
  clusterResourceType,
  createXdsClient,
  type EndpointUpdate,
  endpointResourceType,
  type ListenerUpdate,
  listenerResourceType,
  type ResourceWatcher,
  type RouteConfigurationUpdate,
  routeConfigurationResourceType,
  type XdsClient,
} from "../src/index.js";

let server: ManagementServer;
let client: XdsClient;

beforeEach(async () => {
  server = await createManagementServer({ host: "127.0.0.1", port: 0 });
  client = createXdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }] }],
      node: { id: "chain" },
    },
    env: {},
  });
});

afterEach(async () => {
  await client.close();
  await server.close();
});

/** Resolves with the first update of a watch for which `accept` holds. */
function next<T>(watch: (w: ResourceWatcher<T>) => () => void, accept: (t: T) => boolean = () => true) {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no update within 5 s")), 5_000);
    let cancel: () => void = () => {};
    cancel = watch({
      onResourceChanged(result) {
        if (result.ok && accept(result.resource)) {
          clearTimeout(timer);
          queueMicrotask(cancel);
          resolve(result.resource);
        }
      },
      onAmbientError() {},
    });
  });
}

describe("LDS → RDS → CDS → EDS over HTTP/2", () => {
  it("follows the chain to the endpoints and picks up an endpoint added later", async () => {
    server.setResources([
      buildListener({ name: "svc", routeConfigName: "svc-routes" }),
      buildRouteConfiguration({ name: "svc-routes", cluster: "svc-cluster" }),
      buildCluster({ name: "svc-cluster", edsServiceName: "svc-eds", lrsServerSelf: true }),
      buildClusterLoadAssignment({
        clusterName: "svc-eds",
        localities: [{ region: "eu", zone: "a", endpoints: ["10.0.0.1:8080"] }],
      }),
    ]);
    const listener = await next<ListenerUpdate>((w) => client.watch(listenerResourceType, "svc", w));
    if (listener.kind !== "client") throw new Error("expected a client Listener");
    expect(listener.route).toEqual({ type: "rds", routeConfigName: "svc-routes" });
    expect(listener.httpFilters.map((f) => f.name)).toEqual(["envoy.filters.http.router"]);
    expect(Object.isFrozen(listener)).toBe(true);

    const routes = await next<RouteConfigurationUpdate>((w) =>
      client.watch(routeConfigurationResourceType, "svc-routes", w),
    );
    const action = routes.virtualHosts[0]?.routes[0]?.action;
    expect(action?.type === "cluster" && action.cluster).toBe("svc-cluster");

    const cluster = await next<ClusterUpdate>((w) => client.watch(clusterResourceType, "svc-cluster", w));
    expect(cluster.type === "eds" && cluster.edsServiceName).toBe("svc-eds");
    expect(cluster.lrsServer?.serverUri).toBe(server.address);

    const watchEndpoints = (w: ResourceWatcher<EndpointUpdate>) => client.watch(endpointResourceType, "svc-eds", w);
    const endpoints = await next<EndpointUpdate>(watchEndpoints);
    expect(endpoints.priorities[0]?.localities[0]?.endpoints.map((e) => e.addresses[0])).toEqual([
      { address: "10.0.0.1", port: 8080 },
    ]);

    const grown = next<EndpointUpdate>(
      watchEndpoints,
      (u) => (u.priorities[0]?.localities[0]?.endpoints.length ?? 0) === 2,
    );
    server.setResource(
      buildClusterLoadAssignment({
        clusterName: "svc-eds",
        localities: [{ region: "eu", zone: "a", endpoints: ["10.0.0.1:8080", "10.0.0.2:8080"] }],
      }),
    );
    expect((await grown).priorities[0]?.localities[0]?.endpoints.map((e) => e.addresses[0]?.address)).toEqual([
      "10.0.0.1",
      "10.0.0.2",
    ]);
  });

  it("NACKs a cluster with a bad lb policy, naming the field, and keeps the good one", async () => {
    server.setResource(buildCluster({ name: "c", edsServiceName: "c-eds" }));
    const errors: string[] = [];
    const first = new Promise<ClusterUpdate>((resolve) => {
      client.watch(clusterResourceType, "c", {
        onResourceChanged: (r) => {
          if (r.ok) resolve(r.resource);
        },
        onAmbientError: (e) => {
          errors.push(e.message);
        },
      });
    });
    await first;
    const bad = buildCluster({ name: "c", edsServiceName: "c-eds" });
    bad.lbPolicy = 3; // RANDOM: not supported by gRPC
    server.setResource(bad);
    const nack = await server.hooks.waitForRequest((r) => r.disposition === "nack", { timeoutMs: 5_000 });
    expect(nack.errorDetail?.message).toContain("resource index 0: c: lb_policy");
    for (let i = 0; i < 100 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(errors[0]).toContain("[INVALID_ARGUMENT] invalid resource c: lb_policy");
    expect(client.dumpResources().genericXdsConfigs[0]?.versionInfo).not.toBe("");
  });
});
