import { type Any, anyUnpack } from "@bufbuild/protobuf/wkt";
import { Cluster_DiscoveryType, Cluster_LbPolicy } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { HealthStatus } from "@xdskit/protos/envoy/config/core/v3/health_check_pb";
import { ClusterConfigSchema } from "@xdskit/protos/envoy/extensions/clusters/aggregate/v3/cluster_pb";
import { RouterSchema } from "@xdskit/protos/envoy/extensions/filters/http/router/v3/router_pb";
import { HttpConnectionManagerSchema } from "@xdskit/protos/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb";
import { describe, expect, test } from "vitest";
import {
  buildAggregateCluster,
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildLogicalDnsCluster,
  buildRouteConfiguration,
  parseHostPort,
  routerFilter,
} from "../src/index.js";

describe("builders", () => {
  test("buildLogicalDnsCluster: LOGICAL_DNS with its one host:port endpoint in load_assignment", () => {
    const cluster = buildLogicalDnsCluster({ name: "dns", host: "backend.test", port: 8443 });
    expect(cluster.clusterDiscoveryType).toEqual({ case: "type", value: Cluster_DiscoveryType.LOGICAL_DNS });
    expect(cluster.loadAssignment?.clusterName).toBe("dns");
    const endpoints = cluster.loadAssignment?.endpoints.flatMap((l) => l.lbEndpoints) ?? [];
    expect(endpoints).toHaveLength(1);
    const host = endpoints[0]?.hostIdentifier;
    const address = host?.case === "endpoint" ? host.value.address?.address : undefined;
    expect(address?.case === "socketAddress" && address.value.address).toBe("backend.test");
    expect(address?.case === "socketAddress" && address.value.portSpecifier).toEqual({
      case: "portValue",
      value: 8443,
    });
  });

  test("buildAggregateCluster: envoy.clusters.aggregate with the clusters in the order given", () => {
    const cluster = buildAggregateCluster({ name: "agg", clusters: ["primary", "fallback"] });
    const type = cluster.clusterDiscoveryType;
    expect(type.case === "clusterType" && type.value.name).toBe("envoy.clusters.aggregate");
    const config =
      type.case === "clusterType" ? anyUnpack(type.value.typedConfig as Any, ClusterConfigSchema) : undefined;
    expect(config?.clusters).toEqual(["primary", "fallback"]);
  });

  test("buildListener: an api_listener HCM pointing at RDS over ADS, router filter last", () => {
    const listener = buildListener({ name: "svc", routeConfigName: "svc-route", httpFilters: [routerFilter()] });
    expect(listener.name).toBe("svc");
    const hcm = anyUnpack(listener.apiListener?.apiListener as Any, HttpConnectionManagerSchema);
    expect(hcm?.statPrefix).toBe("svc");
    expect(hcm?.routeSpecifier.case).toBe("rds");
    if (hcm?.routeSpecifier.case !== "rds") throw new Error("not rds");
    expect(hcm.routeSpecifier.value.routeConfigName).toBe("svc-route");
    expect(hcm.routeSpecifier.value.configSource?.configSourceSpecifier.case).toBe("ads");
    expect(hcm.httpFilters.map((f) => f.name)).toEqual(["envoy.filters.http.router", "envoy.filters.http.router"]);
    const last = hcm.httpFilters.at(-1);
    expect(last?.configType.case === "typedConfig" && anyUnpack(last.configType.value, RouterSchema)).toBeTruthy();
  });

  test("buildListener: an inline route config instead of RDS; exactly one of the two", () => {
    const inline = buildListener({ name: "svc", routeConfig: buildRouteConfiguration({ name: "r", cluster: "c" }) });
    const hcm = anyUnpack(inline.apiListener?.apiListener as Any, HttpConnectionManagerSchema);
    expect(hcm?.routeSpecifier.case).toBe("routeConfig");
    expect(() => buildListener({ name: "svc" })).toThrow(/exactly one/);
  });

  test("buildRouteConfiguration: one virtual host `*`, one prefix route to a cluster or weighted clusters", () => {
    const single = buildRouteConfiguration({ name: "r", cluster: "c" });
    const host = single.virtualHosts[0];
    expect(host?.domains).toEqual(["*"]);
    const route = host?.routes[0];
    expect(route?.match?.pathSpecifier).toEqual({ case: "prefix", value: "" });
    expect(route?.action.case === "route" && route.action.value.clusterSpecifier).toEqual({
      case: "cluster",
      value: "c",
    });

    const weighted = buildRouteConfiguration({
      name: "r",
      weightedClusters: [
        { name: "a", weight: 3 },
        { name: "b", weight: 1 },
      ],
      domains: ["svc"],
    });
    const action = weighted.virtualHosts[0]?.routes[0]?.action;
    if (action?.case !== "route" || action.value.clusterSpecifier.case !== "weightedClusters") throw new Error("no");
    expect(action.value.clusterSpecifier.value.clusters.map((c) => [c.name, c.weight])).toEqual([
      ["a", 3],
      ["b", 1],
    ]);
    // gRPC C-core 1.29 NACKs weighted clusters whose total_weight is not their sum.
    expect(action.value.clusterSpecifier.value.totalWeight).toBe(4);
    expect(() => buildRouteConfiguration({ name: "r" })).toThrow(/exactly one/);
  });

  test("buildRouteConfiguration: weights every gRPC client accepts, or a TypeError naming the problem", () => {
    const drained = buildRouteConfiguration({
      name: "r",
      weightedClusters: [
        { name: "a", weight: 0 },
        { name: "b", weight: 2 },
      ],
    });
    const action = drained.virtualHosts[0]?.routes[0]?.action;
    expect(action?.case === "route" && action.value.clusterSpecifier.value).toMatchObject({ totalWeight: 2 });
    const bad = (weightedClusters: { name: string; weight: number }[]) => () =>
      buildRouteConfiguration({ name: "r", weightedClusters });
    expect(bad([])).toThrow(/weightedClusters is empty/);
    expect(bad([{ name: "a", weight: 0 }])).toThrow(/must sum to 1\.\.4294967295, got 0/);
    expect(bad([{ name: "a", weight: -1 }])).toThrow(/weight of a must be an integer >= 0/);
    expect(bad([{ name: "a", weight: 1.5 }])).toThrow(/weight of a must be an integer >= 0/);
    expect(
      bad([
        { name: "a", weight: 0xffff_ffff },
        { name: "b", weight: 1 },
      ]),
    ).toThrow(/got 4294967296/);
  });

  test("buildCluster: EDS over ADS, round robin by default, optional LRS to itself", () => {
    const cluster = buildCluster({ name: "c", edsServiceName: "c-eds", lrsServerSelf: true });
    expect(cluster.clusterDiscoveryType).toEqual({ case: "type", value: Cluster_DiscoveryType.EDS });
    expect(cluster.edsClusterConfig?.serviceName).toBe("c-eds");
    expect(cluster.edsClusterConfig?.edsConfig?.configSourceSpecifier.case).toBe("ads");
    expect(cluster.lbPolicy).toBe(Cluster_LbPolicy.ROUND_ROBIN);
    expect(cluster.lrsServer?.configSourceSpecifier.case).toBe("self");
    expect(buildCluster({ name: "c" }).lrsServer).toBeUndefined();
  });

  test("buildCluster: lrs_report_endpoint_metrics (A85), none by default", () => {
    const metrics = ["cpu_utilization", "named_metrics.queue_depth", "named_metrics.*"];
    const cluster = buildCluster({ name: "c", lrsServerSelf: true, lrsReportEndpointMetrics: metrics });
    expect(cluster.lrsReportEndpointMetrics).toEqual(metrics);
    expect(buildCluster({ name: "c" }).lrsReportEndpointMetrics).toEqual([]);
  });

  test("buildClusterLoadAssignment: localities with priority, weight, health and endpoint weights", () => {
    const cla = buildClusterLoadAssignment({
      clusterName: "c",
      localities: [
        {
          region: "r",
          zone: "a",
          weight: 3,
          endpoints: ["10.0.0.1:80", { address: "10.0.0.2", port: 81, health: "unhealthy", weight: 5 }],
        },
        { zone: "b", priority: 1, endpoints: ["[::1]:90"] },
      ],
    });
    expect(cla.clusterName).toBe("c");
    const [first, second] = cla.endpoints;
    expect(first?.locality).toMatchObject({ region: "r", zone: "a", subZone: "" });
    expect(first?.loadBalancingWeight).toBe(3);
    expect(first?.priority).toBe(0);
    expect(second?.priority).toBe(1);
    expect(second?.loadBalancingWeight).toBe(1);
    const endpoints = first?.lbEndpoints ?? [];
    const addressOf = (i: number) => {
      const id = endpoints[i]?.hostIdentifier;
      const address = id?.case === "endpoint" ? id.value.address?.address : undefined;
      return address?.case === "socketAddress" ? address.value : undefined;
    };
    expect(addressOf(0)?.address).toBe("10.0.0.1");
    expect(addressOf(0)?.portSpecifier).toEqual({ case: "portValue", value: 80 });
    expect(endpoints[0]?.healthStatus).toBe(HealthStatus.UNKNOWN);
    expect(endpoints[0]?.loadBalancingWeight).toBeUndefined();
    expect(endpoints[1]?.healthStatus).toBe(HealthStatus.UNHEALTHY);
    expect(endpoints[1]?.loadBalancingWeight).toBe(5);
  });

  test("buildClusterLoadAssignment: what gRPC clients reject is a TypeError naming the problem", () => {
    const cla = (localities: Parameters<typeof buildClusterLoadAssignment>[0]["localities"]) => () =>
      buildClusterLoadAssignment({ clusterName: "c", localities });
    expect(cla([{ endpoints: ["10.0.0.1:80"] }, { zone: "b", endpoints: ["10.0.0.1:80"] }])).toThrow(
      /endpoint 10\.0\.0\.1:80 appears twice/,
    );
    expect(
      cla([
        { zone: "a", endpoints: ["10.0.0.1:80"] },
        { zone: "a", endpoints: ["10.0.0.2:80"] },
      ]),
    ).toThrow(/localities\[1\] repeats a locality of priority 0/);
    expect(cla([{ endpoints: ["10.0.0.1:80"] }, { zone: "b", priority: 2, endpoints: [] }])).toThrow(
      /without gaps; 1 is missing/,
    );
    expect(cla([{ weight: 0, endpoints: [] }])).toThrow(/localities\[0\]\.weight must be >= 1/);
    expect(cla([{ endpoints: [{ address: "10.0.0.1", port: 80, weight: 0 }] }])).toThrow(
      /weight of 10\.0\.0\.1:80 must be >= 1/,
    );
    expect(cla([{ endpoints: [{ address: "10.0.0.1", port: 70000 }] }])).toThrow(/port of 10\.0\.0\.1 must be in/);
    // One locality may appear once in each priority.
    expect(
      cla([
        { zone: "a", endpoints: ["10.0.0.1:80"] },
        { zone: "a", priority: 1, endpoints: ["10.0.0.2:80"] },
      ]),
    ).not.toThrow();
  });

  test("parseHostPort", () => {
    expect(parseHostPort("127.0.0.1:8080")).toEqual({ address: "127.0.0.1", port: 8080 });
    expect(parseHostPort("[::1]:443")).toEqual({ address: "::1", port: 443 });
    expect(parseHostPort("backend.local:1")).toEqual({ address: "backend.local", port: 1 });
    for (const bad of ["127.0.0.1", "::1:80", "h:99999", ":80"]) expect(() => parseHostPort(bad)).toThrow(TypeError);
  });
});
