// aggregate_cluster_dns_fallback (issue 21, A37/A75; the document has no such case): the URL map's cluster is an
// aggregate of an EDS cluster (the primary MIG) and a LOGICAL_DNS cluster naming `localhost:<port>` of a fallback
// backend. RPCs go to the primary; with the primary stopped they go to the DNS cluster; with it back, to it again.
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { type Cluster, Cluster_DiscoveryType, ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { ClusterConfigSchema } from "@xdskit/protos/envoy/extensions/clusters/aggregate/v3/cluster_pb";
import { allGoTo } from "../checks.js";
import type { InteropCase } from "../driver.js";
import { ANY_PATH, backendService, serviceListener, urlMap } from "../resources.js";
import { localGroup, names, startAll, stopAll } from "./setup.js";

const AGGREGATE = "aggregate-service";
const PRIMARY = "primary-service";
const FALLBACK = "dns-fallback-service";

/** A LOGICAL_DNS cluster of `host:port` (A37: one locality, one endpoint, its socket address). */
function logicalDnsCluster(name: string, host: string, port: number): Cluster {
  const address = { address: host, portSpecifier: { case: "portValue" as const, value: port } };
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
                value: { address: { address: { case: "socketAddress", value: address } } },
              },
            },
          ],
        },
      ],
    },
  });
}

/** An aggregate cluster over `clusters`, highest priority first. */
function aggregateCluster(name: string, clusters: string[]): Cluster {
  const typedConfig = anyPack(ClusterConfigSchema, create(ClusterConfigSchema, { clusters }));
  return create(ClusterSchema, {
    name,
    clusterDiscoveryType: { case: "clusterType", value: { name: "envoy.clusters.aggregate", typedConfig } },
  });
}

export const aggregateClusterDnsFallback: InteropCase = {
  name: "aggregate_cluster_dns_fallback",
  failOnFailedRpcs: false,
  async run(context) {
    const { profile } = context;
    const [primary, [fallback]] = await Promise.all([
      context.world.startGroup("primary", 2),
      context.world.startGroup("fallback", 1),
    ]);
    await context.world.publish([
      serviceListener(),
      urlMap([{ match: ANY_PATH, cluster: AGGREGATE }]),
      aggregateCluster(AGGREGATE, [PRIMARY, FALLBACK]),
      ...backendService(PRIMARY, [localGroup("primary", primary)]),
      logicalDnsCluster(FALLBACK, "localhost", fallback!.port),
    ]);
    context.startClient({ qps: profile.qps });
    await context.steady("the aggregate's EDS cluster gets every RPC", allGoTo(names(primary)), profile.checkRpcs);

    await stopAll(primary);
    await context.steady(
      "with the primary stopped, the LOGICAL_DNS cluster gets every RPC",
      allGoTo([fallback!.name], { allowFailures: true }),
      profile.checkRpcs,
    );

    await startAll(primary);
    await context.steady(
      "with the primary back, it gets every RPC again",
      allGoTo(names(primary), { allowFailures: true }),
      profile.checkRpcs,
    );
  },
};
