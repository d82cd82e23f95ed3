// One leaf cluster (EDS or LOGICAL_DNS) as a policy: cluster_impl over a priority policy over the cluster's own LB
// policy (A75: the leaf's policy, never the aggregate's). A route's cluster that is a leaf is this policy alone; an
// aggregate cluster is a priority policy whose children are these, one per leaf (cluster-manager.ts). See
// docs/decisions.md#connect-xds-aggregate-and-dns-clusters.
import type { LrsClient } from "@xdskit/orca-lrs-bridge";
import type { ClusterUpdate, EndpointUpdate, UpstreamTlsConfig } from "@xdskit/xds-client";
import type { LbEndpoint, LbPolicy, LbPolicyFactory } from "../balancer/lb-policy.js";
import type { SecurityKey } from "../credentials/fallback-credentials.js";
import { withOutlierDetection } from "../policies/outlier-detection-policy.js";
import type { PriorityConfig } from "../policies/priority.js";
import { ClusterImpl, type ClusterImplConfig } from "./cluster-impl.js";
import { localityLabel } from "./locality.js";

/** The registry name of the leaf policy; the cluster manager adds it to a registry of its own, never the user's. */
export const CLUSTER_LEAF_POLICY = "xdskit_cluster_leaf";

const USABLE_HEALTH = new Set(["HEALTHY", "UNKNOWN"]);

/** What a leaf's discovery produced: EDS's assignment, DNS's addresses, or an error before any result. */
export type LeafData =
  | { readonly kind: "eds"; readonly assignment: EndpointUpdate }
  | { readonly kind: "dns"; readonly addresses: readonly string[] }
  | { readonly kind: "error"; readonly message: string };

export interface LeafConfig {
  readonly impl: ClusterImplConfig;
  /** Why the leaf has no endpoints, when it has none. */
  readonly note?: string;
  /** What the leaf's policies' re-resolution requests do (DNS resolves again; EDS: nothing). */
  readonly reresolve: () => void;
}

/** The EDS resource a cluster's endpoints come from: its `service_name`, else its own name. */
export function edsResourceName(cluster: ClusterUpdate): string {
  return cluster.type === "eds" && cluster.edsServiceName !== "" ? cluster.edsServiceName : cluster.name;
}

/** The empty locality of a LOGICAL_DNS cluster's one endpoint (A37). */
const DNS_LOCALITY = Object.freeze({
  name: Object.freeze({ region: "", zone: "", subZone: "" }),
  label: localityLabel({ region: "", zone: "", subZone: "" }),
  weight: 1,
});

/**
 * The leaf's config and endpoints. Endpoints are routed `[prefix..., priority-<n>, locality label]`. A DNS leaf is
 * one priority, one locality, one endpoint with every address (A61); a leaf whose discovery failed before any result
 * is one priority with no endpoints (A37), so a parent priority policy fails over from it.
 */
export function leafUpdate(
  cluster: ClusterUpdate,
  data: LeafData,
  prefix: readonly string[],
  reresolve: () => void,
): { config: LeafConfig; endpoints: LbEndpoint[] } {
  const endpoints: LbEndpoint[] = [];
  const priorities: string[] = [];
  const children = new Map<string, { config: readonly unknown[] }>();
  const childConfig = withOutlierDetection(cluster);
  const addPriority = (index: number) => {
    const name = `priority-${index}`;
    priorities.push(name);
    children.set(name, { config: childConfig });
    return name;
  };
  let note: string | undefined;
  if (data.kind === "eds") {
    data.assignment.priorities.forEach((priority, index) => {
      const name = addPriority(index);
      for (const locality of priority.localities) {
        const label = localityLabel(locality.locality);
        const lbLocality = Object.freeze({ name: locality.locality, label, weight: locality.weight });
        for (const endpoint of locality.endpoints) {
          if (!USABLE_HEALTH.has(endpoint.healthStatus)) continue;
          endpoints.push({
            addresses: endpoint.addresses.map(({ address, port }) =>
              address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`,
            ),
            weight: endpoint.weight,
            healthStatus: endpoint.healthStatus,
            hostname: endpoint.hostname,
            ...(endpoint.hashKey === "" ? {} : { hashKey: endpoint.hashKey }),
            locality: lbLocality,
            path: [...prefix, name, label],
          });
        }
      }
    });
    if (endpoints.length === 0) note = `EDS resource "${edsResourceName(cluster)}" has no usable endpoints`;
  } else {
    const name = addPriority(0);
    if (data.kind === "dns") {
      endpoints.push({
        addresses: data.addresses,
        weight: 1,
        healthStatus: "UNKNOWN",
        hostname: "",
        locality: DNS_LOCALITY,
        path: [...prefix, name, DNS_LOCALITY.label],
      });
    } else {
      note = data.message;
    }
  }
  const priority: PriorityConfig = { priorities, children };
  const impl: ClusterImplConfig = {
    cluster,
    ...(cluster.type === "eds" && cluster.edsServiceName !== "" ? { edsServiceName: cluster.edsServiceName } : {}),
    dropOverloads: data.kind === "eds" ? data.assignment.dropOverloads : [],
    child: { policy: "priority_experimental", config: priority },
  };
  return { config: { impl, reresolve, ...(note === undefined ? {} : { note }) }, endpoints };
}

/** The leaf policy: a ClusterImpl whose tree's re-resolution requests go to the leaf's discovery. */
export function clusterLeafPolicy(
  lrs: () => LrsClient | undefined,
  security?: (config: UpstreamTlsConfig | undefined) => SecurityKey | undefined,
): LbPolicyFactory<LeafConfig> {
  return {
    name: CLUSTER_LEAF_POLICY,
    typeNames: [],
    parseConfig: (json) => json as LeafConfig,
    create(helper): LbPolicy<LeafConfig> {
      let reresolve = () => {};
      const impl = new ClusterImpl({ ...helper, requestReresolution: () => reresolve() }, lrs, security);
      return {
        update({ config, endpoints, resolutionNote }) {
          reresolve = config.reresolve;
          const note = config.note ?? resolutionNote;
          impl.update({ config: config.impl, endpoints, ...(note === undefined ? {} : { resolutionNote: note }) });
        },
        exitIdle: () => impl.exitIdle(),
        close: () => impl.close(),
      };
    },
  };
}
