// The demo's DPDS steps: the control plane serves demo-cluster in two variants (track=stable, track=canary) and tells
// the client through its DPDS resource which one to use; the client (wrapped by @xdskit/dpds-wrapper) follows, and
// CSDS shows which variant each of its subscriptions holds.
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { canonicalText, fromProto } from "@xdskit/constraint-matcher";
import { buildCluster, buildClusterLoadAssignment, CDS_TYPE_URL, type ManagementServer } from "@xdskit/control-plane";
import { ClientResourceStatus } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import { ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { Logger, XdsClient } from "@xdskit/xds-client";

const CLUSTER_TYPE = "envoy.config.cluster.v3.Cluster";

/**
 * Prints the wrapper's lines: the DPDS parameters it received (info) and each move of a watch (debug). An error the
 * wrapper holds back during a move (the plain name's removal, as the variants replace it) is worded as what it is,
 * an expected part of the move that the watcher is spared, rather than as a failure.
 */
export function dpdsLogger(out: (line: string) => void): Logger {
  const print = (message: string) => {
    const held = /^(.*?): (\[[A-Z_]+\] .*); held back until (.*) answers$/.exec(message);
    out(
      held
        ? `  ${held[1]}: the plain name's removal is expected (the variants replace it); the watcher keeps its cluster until ${held[3]} answers`
        : `  ${message}`,
    );
  };
  return { error: print, warn: print, info: print, debug: print };
}

/** The CSDS rows of the cluster's subscriptions: name, state, and the variant (constraints) each holds. */
export function clusterVariants(client: XdsClient, cluster: string): string[] {
  return client
    .dumpResources()
    .genericXdsConfigs.filter((g) => g.typeUrl === CDS_TYPE_URL && g.name.startsWith(cluster))
    .map((g) => {
      const wrapper = g.xdsConfig?.typeUrl.endsWith("/envoy.service.discovery.v3.Resource")
        ? anyUnpack(g.xdsConfig, ResourceSchema)
        : undefined;
      const constraints = wrapper?.resourceName?.dynamicParameterConstraints;
      const variant = constraints ? `the variant ${canonicalText(fromProto(constraints))}` : "no variant";
      return `${g.name} (${ClientResourceStatus[g.clientStatus]}) holds ${variant}`;
    });
}

/** Polls until `done()` holds (or 5 s pass, which the caller's own checks then report). */
export async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}

/**
 * Replaces demo-cluster by two variants, in one change: stable is the cluster the client already uses, canary
 * sends its traffic to other endpoints. DPDS tells the client to use stable.
 */
export function publishVariants(server: ManagementServer, stable: ReturnType<typeof buildCluster>): void {
  const canary = buildCluster({ name: "demo-cluster", edsServiceName: "demo-eds-canary", lrsServerSelf: true });
  server.removeResource(CDS_TYPE_URL, "demo-cluster");
  server.setResources([
    { resource: stable, constraints: "track=stable" },
    { resource: canary, constraints: "track=canary" },
    buildClusterLoadAssignment({
      clusterName: "demo-eds-canary",
      localities: [{ region: "eu-west", zone: "c", endpoints: ["10.0.9.1:8080"] }],
    }),
  ]);
  server.setDynamicParameters("demo-client", { [CLUSTER_TYPE]: "track=stable" });
}

/** DPDS tells the client to use canary. */
export function switchToCanary(server: ManagementServer): void {
  server.setDynamicParameters("demo-client", { [CLUSTER_TYPE]: "track=canary" });
}
