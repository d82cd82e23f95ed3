// The xdskit packages composed the way an application composes them:
//   1. a control plane (@xdskit/control-plane) on 127.0.0.1 serving listener -> route -> cluster -> endpoints, the
//      cluster in two TP2 variants, and a DPDS resource telling this node which variant to use;
//   2. an xDS client (@xdskit/xds-client) wrapped by @xdskit/dpds-wrapper, following LDS -> RDS -> CDS -> EDS;
//   3. the client's CSDS (@xdskit/csds), served on the control plane's port and asked over gRPC.
// Everything is closed at the end, whatever happened.
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  createManagementServer,
} from "@xdskit/control-plane";
import { clientStatusRoutes, createClientStatusRegistry, formatClientConfig } from "@xdskit/csds";
import { withDynamicParameters } from "@xdskit/dpds-wrapper";
import { ClientStatusDiscoveryService } from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import {
  clusterResourceType,
  createXdsClient,
  endpointResourceType,
  listenerResourceType,
  type ResourceResult,
  type ResourceType,
  routeConfigurationResourceType,
  type XdsClient,
  type XdsError,
} from "@xdskit/xds-client";

export interface ComposedClientResult {
  /** The endpoints the chain ends at, `host:port`. */
  readonly endpoints: readonly string[];
  /** The client's CSDS answer, as `formatClientConfig` prints it. */
  readonly csds: string;
}

const NODE_ID = "example-node";

/** Watches one resource (the watch stays open, so CSDS lists it); resolves with its first update, or rejects. */
function firstUpdate<T>(client: XdsClient, type: ResourceType<T>, name: string, cancels: (() => void)[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const watcher = {
      onResourceChanged: (result: ResourceResult<T>) => (result.ok ? resolve(result.resource) : reject(result.error)),
      onAmbientError: (error: XdsError) => reject(error),
    };
    cancels.push(client.watch(type, name, watcher));
  });
}

export async function runComposedClient(log: (line: string) => void = console.log): Promise<ComposedClientResult> {
  const registry = createClientStatusRegistry();
  // 127.0.0.1 and an ephemeral port by default; CSDS shares the port.
  const server = await createManagementServer({ routes: clientStatusRoutes(registry) });
  server.setResources([
    buildListener({ name: "echo.test", routeConfigName: "echo-route" }),
    buildRouteConfiguration({ name: "echo-route", cluster: "echo" }),
    { resource: buildCluster({ name: "echo", edsServiceName: "echo-stable" }), constraints: "track=stable" },
    { resource: buildCluster({ name: "echo", edsServiceName: "echo-canary" }), constraints: "track=canary" },
    buildClusterLoadAssignment({
      clusterName: "echo-stable",
      localities: [{ zone: "a", endpoints: ["127.0.0.1:50051"] }],
    }),
    buildClusterLoadAssignment({
      clusterName: "echo-canary",
      localities: [{ zone: "a", endpoints: ["127.0.0.1:50052"] }],
    }),
  ]);
  // DPDS: this node is to get the canary variant of clusters.
  server.setDynamicParameters(NODE_ID, { "envoy.config.cluster.v3.Cluster": "track=canary" });

  const client = withDynamicParameters(
    createXdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: "DELTA_GRPC" }],
        node: { id: NODE_ID },
      },
      target: "xds:///echo.test",
    }),
  );
  const unregister = registry.add(client);
  const cancels: (() => void)[] = [];
  try {
    const listener = await firstUpdate(client, listenerResourceType, "echo.test", cancels);
    if (listener.kind !== "client") throw new Error(`listener ${listener.name} is a server Listener`);
    if (listener.route.type !== "rds") throw new Error(`listener ${listener.name} has an inline route`);
    log(`listener ${listener.name} -> route ${listener.route.routeConfigName}`);

    const route = await firstUpdate(client, routeConfigurationResourceType, listener.route.routeConfigName, cancels);
    const action = route.virtualHosts[0]?.routes[0]?.action;
    if (action?.type !== "cluster") throw new Error(`route ${route.name} does not name one cluster`);
    log(`route ${route.name} -> cluster ${action.cluster}`);

    const cluster = await firstUpdate(client, clusterResourceType, action.cluster, cancels);
    if (cluster.type !== "eds") throw new Error(`cluster ${cluster.name} is ${cluster.type}`);
    // An empty edsServiceName means: the endpoints are named after the cluster.
    const endpointsName = cluster.edsServiceName || cluster.name;
    log(`cluster ${cluster.name} -> endpoints ${endpointsName}`);

    const assignment = await firstUpdate(client, endpointResourceType, endpointsName, cancels);
    const endpoints = assignment.priorities.flatMap((priority) =>
      priority.localities.flatMap((locality) =>
        locality.endpoints.map((endpoint) => `${endpoint.addresses[0]?.address}:${endpoint.addresses[0]?.port}`),
      ),
    );
    log(`endpoints ${endpoints.join(", ")}`);

    const csds = createClient(ClientStatusDiscoveryService, createGrpcTransport({ baseUrl: server.url }));
    const { config } = await csds.fetchClientStatus({});
    const table = config.map((c) => formatClientConfig(c)).join("\n"); // a header line per client, then its rows
    log(table);
    return { endpoints, csds: table };
  } finally {
    for (const cancel of cancels) cancel();
    unregister();
    await client.close();
    await server.close();
  }
}
