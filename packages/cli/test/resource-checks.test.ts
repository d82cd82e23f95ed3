// The checks behind `xdskit serve` (and any command that serves a set of resources), on resources in memory: the
// unknown-field path through Any, lists, maps and the JSON forms that are not objects of fields; and the references
// the checks follow (inline route configurations, aggregate clusters, empty endpoints), leaving server listeners be.
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { AnySchema, anyUnpack } from "@bufbuild/protobuf/wkt";
import { xdsRegistry } from "@xdskit/protos";
import { describe, expect, it } from "vitest";
import { unknownFieldProblem } from "../src/json-field-path.js";
import { type CheckedResource, checkResources, formatWarning } from "../src/resource-checks.js";

const CLUSTER = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
const HCM = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const ROUTER = {
  name: "router",
  typedConfig: { "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router" },
};

function resource(json: Record<string, unknown>, where: string): CheckedResource {
  const message = anyUnpack(fromJson(AnySchema, json as JsonValue, { registry: xdsRegistry }), xdsRegistry);
  if (!message) throw new Error("no message");
  const name = String(
    (message as { name?: string; clusterName?: string }).clusterName ?? (message as { name?: string }).name,
  );
  return { message, name, where };
}

describe("unknownFieldProblem", () => {
  it("accepts every JSON form fromJson accepts: durations, wrappers, Struct, proto names", () => {
    const cluster = {
      "@type": CLUSTER,
      name: "c",
      connect_timeout: "5s",
      metadata: { filterMetadata: { anything: { goes: { here: 1 } } } },
    };
    expect(unknownFieldProblem(cluster, xdsRegistry)).toBeUndefined();
    expect(() => fromJson(AnySchema, cluster as JsonValue, { registry: xdsRegistry })).not.toThrow();
    const endpoints = {
      "@type": "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
      cluster_name: "c",
      endpoints: [{ loadBalancingWeight: 3, lbEndpoints: [{ loadBalancingWeight: 1 }] }],
    };
    expect(unknownFieldProblem(endpoints, xdsRegistry)).toBeUndefined();
    expect(() => fromJson(AnySchema, endpoints as JsonValue, { registry: xdsRegistry })).not.toThrow();
  });

  it("follows Any, lists and maps to the unknown key, naming the fields it is close to", () => {
    const listener = {
      "@type": "type.googleapis.com/envoy.config.listener.v3.Listener",
      name: "l",
      apiListener: { apiListener: { "@type": HCM, httpFilters: [ROUTER, { ...ROUTER, name: "x", typedConfg: {} }] } },
    };
    expect(unknownFieldProblem(listener, xdsRegistry)).toBe(
      'apiListener.apiListener.httpFilters[1].typedConfg: unknown field "typedConfg" in envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter (did you mean "typedConfig"?)',
    );
    const cluster = {
      "@type": CLUSTER,
      name: "c",
      metadata: { typedFilterMetadata: { a: { "@type": CLUSTER, nam: "x" } } },
    };
    expect(unknownFieldProblem(cluster, xdsRegistry)).toBe(
      'metadata.typedFilterMetadata["a"].nam: unknown field "nam" in envoy.config.cluster.v3.Cluster (did you mean "name"?)',
    );
    expect(unknownFieldProblem({ "@type": CLUSTER, zzzzzz: 1 }, xdsRegistry)).toBe(
      'zzzzzz: unknown field "zzzzzz" in envoy.config.cluster.v3.Cluster',
    );
  });
});

describe("checkResources", () => {
  it("follows inline route configurations and aggregate clusters, warns about empty endpoints, skips server listeners", () => {
    const resources = [
      resource(
        {
          "@type": "type.googleapis.com/envoy.config.listener.v3.Listener",
          name: "inline",
          apiListener: {
            apiListener: {
              "@type": HCM,
              routeConfig: {
                virtualHosts: [{ domains: ["*"], routes: [{ match: { prefix: "" }, route: { cluster: "gone" } }] }],
              },
              httpFilters: [ROUTER],
            },
          },
        },
        "a[0]",
      ),
      // A server-side listener (no api_listener): for Envoy or xDS-enabled gRPC servers, not for client channels.
      resource(
        {
          "@type": "type.googleapis.com/envoy.config.listener.v3.Listener",
          name: "server",
          address: { socketAddress: { address: "0.0.0.0", portValue: 8080 } },
        },
        "a[1]",
      ),
      resource(
        {
          "@type": CLUSTER,
          name: "agg",
          clusterType: {
            name: "envoy.clusters.aggregate",
            typedConfig: {
              "@type": "type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig",
              clusters: ["empty", "missing"],
            },
          },
        },
        "a[2]",
      ),
      resource({ "@type": CLUSTER, name: "empty", type: "EDS", edsClusterConfig: { edsConfig: { ads: {} } } }, "a[3]"),
      resource(
        { "@type": "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment", clusterName: "empty" },
        "a[4]",
      ),
    ];
    expect(checkResources(resources).map(formatWarning)).toEqual([
      'a[0] Listener inline: apiListener.apiListener.routeConfig.virtualHosts[0].routes[0].route.cluster: no Cluster "gone" is served',
      'a[2] Cluster agg: clusterType.typedConfig.clusters[1]: no Cluster "missing" is served',
      "a[4] ClusterLoadAssignment empty: no endpoints: calls to its cluster fail UNAVAILABLE",
    ]);
  });
});
