// A control plane with one listener -> route -> cluster -> endpoints set-up, and transports made against it.
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  createManagementServer,
  type LocalityInit,
  type ManagementServer,
} from "@xdskit/control-plane";
import { type BootstrapConfig, createXdsClient, type XdsClient } from "@xdskit/xds-client";

export const NODE_ID = "connect-xds-test";

export function bootstrapFor(server: ManagementServer): BootstrapConfig {
  return {
    xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }] }],
    node: { id: NODE_ID },
  };
}

export async function startControlPlane(): Promise<ManagementServer> {
  return createManagementServer();
}

/** Listener `name` -> route `name-route` -> cluster `cluster` -> the given localities. */
export function simpleSnapshot(name: string, cluster: string, localities: readonly LocalityInit[]) {
  return [
    buildListener({ name, routeConfigName: `${name}-route` }),
    buildRouteConfiguration({ name: `${name}-route`, cluster }),
    buildCluster({ name: cluster }),
    buildClusterLoadAssignment({ clusterName: cluster, localities }),
  ];
}

export function clientFor(server: ManagementServer): XdsClient {
  return createXdsClient({ bootstrap: bootstrapFor(server) });
}
