// aggregate_cluster_dns_fallback (issue 21, A37/A75; the document has no such case): the URL map's cluster is an
// aggregate of an EDS cluster (the primary MIG) and a LOGICAL_DNS cluster naming `localhost:<port>` of a fallback
// backend. RPCs go to the primary; with the primary stopped they go to the DNS cluster; with it back, to it again.
import { buildAggregateCluster, buildLogicalDnsCluster } from "@xdskit/control-plane";
import { allGoTo } from "../checks.js";
import type { InteropCase } from "../driver.js";
import { ANY_PATH, backendService, serviceListener, urlMap } from "../resources.js";
import { localGroup, names, startAll, stopAll } from "./setup.js";

const AGGREGATE = "aggregate-service";
const PRIMARY = "primary-service";
const FALLBACK = "dns-fallback-service";

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
      buildAggregateCluster({ name: AGGREGATE, clusters: [PRIMARY, FALLBACK] }),
      ...backendService(PRIMARY, [localGroup("primary", primary)]),
      buildLogicalDnsCluster({ name: FALLBACK, host: "localhost", port: fallback!.port }),
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
