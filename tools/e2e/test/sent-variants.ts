// What the control plane sent for one cluster name since a hook mark: each variant by its marker (the cluster's EDS
// service name) and its constraints as on the wire (undefined: sent without).
import { type Any, anyUnpack } from "@bufbuild/protobuf/wkt";
import type { ManagementServer } from "@xdskit/control-plane";
import { type Cluster, ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import {
  type DynamicParameterConstraints,
  type Resource,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";

const WRAPPER = `type.googleapis.com/${ResourceSchema.typeName}`;

export function sentVariants(
  server: ManagementServer,
  after: number,
  name: string,
): Map<string, DynamicParameterConstraints | undefined> {
  const out = new Map<string, DynamicParameterConstraints | undefined>();
  const add = (resourceName: string, any: Any | undefined, constraints: DynamicParameterConstraints | undefined) => {
    const cluster = any && (anyUnpack(any, ClusterSchema) as Cluster | undefined);
    if (resourceName === name && cluster) out.set(cluster.edsClusterConfig?.serviceName ?? "", constraints);
  };
  const addWrapped = (r: Resource) =>
    add(r.resourceName?.name ?? r.name, r.resource, r.resourceName?.dynamicParameterConstraints);
  for (const event of server.hooks.responses()) {
    if (event.seq <= after) continue;
    if (event.kind === "delta") for (const r of event.response.resources) addWrapped(r);
    else {
      for (const any of event.response.resources) {
        if (any.typeUrl === WRAPPER) addWrapped(anyUnpack(any, ResourceSchema) as Resource);
        else add((anyUnpack(any, ClusterSchema) as Cluster).name, any, undefined);
      }
    }
  }
  return out;
}
