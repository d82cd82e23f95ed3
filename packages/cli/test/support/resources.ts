// Resources the CLI tests serve, and a way to follow what an @xdskit/xds-client receives.
import type { EndpointUpdate, ResourceResult, XdsClient } from "@xdskit/xds-client";

export const CLUSTER_YAML = `# the cluster and its endpoints, as two YAML documents
"@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
name: echo
type: EDS
edsClusterConfig: { edsConfig: { ads: {} } }
---
"@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
clusterName: echo
endpoints:
  - locality: { zone: a }
    loadBalancingWeight: 1
    lbEndpoints:
      - endpoint: { address: { socketAddress: { address: 127.0.0.1, portValue: 50051 } } }
`;

export function listenerJson(name: string): string {
  return JSON.stringify([
    {
      "@type": "type.googleapis.com/envoy.config.listener.v3.Listener",
      name,
      apiListener: {
        apiListener: {
          "@type":
            "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
          rds: { configSource: { ads: {} }, routeConfigName: "echo-route" },
          httpFilters: [
            {
              name: "router",
              typedConfig: { "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router" },
            },
          ],
        },
      },
    },
  ]);
}

/** The results of a watch, and a way to wait for one that satisfies a check. */
export function follow<T>(client: XdsClient, type: Parameters<XdsClient["watch"]>[0], name: string) {
  const results: ResourceResult<T>[] = [];
  const waiters = new Set<() => void>();
  client.watch(type, name, {
    onResourceChanged(result) {
      results.push(result as ResourceResult<T>);
      for (const waiter of waiters) waiter();
    },
    onAmbientError: () => {},
  });
  return {
    results,
    until: (check: (result: ResourceResult<T>) => boolean) =>
      new Promise<ResourceResult<T>>((resolve) => {
        const test = () => {
          const last = results.at(-1);
          if (last && check(last)) {
            waiters.delete(test);
            resolve(last);
          }
        };
        waiters.add(test);
        test();
      }),
  };
}

/** The port of each endpoint of an EDS update. */
export const ports = (result: ResourceResult<EndpointUpdate>) =>
  result.ok
    ? result.resource.priorities.flatMap((p) =>
        p.localities.flatMap((l) => l.endpoints.map((e) => e.addresses[0]?.port)),
      )
    : [];
