// weighted_round_robin, in the style of doc/xds-test-descriptions.md (which has no such case): weights from the
// backends' ORCA reports (gRFC A58).
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import {
  LoadBalancingPolicy_PolicySchema,
  LoadBalancingPolicySchema,
} from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { TypedExtensionConfigSchema } from "@xdskit/protos/envoy/config/core/v3/extension_pb";
import { ClientSideWeightedRoundRobinSchema } from "@xdskit/protos/envoy/extensions/load_balancing_policies/client_side_weighted_round_robin/v3/client_side_weighted_round_robin_pb";
import { WrrLocalitySchema } from "@xdskit/protos/envoy/extensions/load_balancing_policies/wrr_locality/v3/wrr_locality_pb";
import type { InteropCase } from "../driver.js";
import { ANY_PATH, backendService, serviceListener, urlMap } from "../resources.js";
import { seconds } from "./policy-support.js";
import { DEFAULT_SERVICE, localGroup } from "./setup.js";

export const weightedRoundRobin: InteropCase = {
  name: "weighted_round_robin",
  failOnFailedRpcs: true,
  async run(context) {
    // qps / application_utilization = 100/0.2, 100/0.4, 100/0.8: shares 4/7, 2/7, 1/7.
    const utilization = [0.2, 0.4, 0.8];
    const backends = await context.world.startGroup("mig", 3, (i) => ({
      applicationUtilization: utilization[i] as number,
    }));
    await context.world.publish([
      serviceListener(),
      urlMap([{ match: ANY_PATH, cluster: DEFAULT_SERVICE }]),
      ...backendService(DEFAULT_SERVICE, [localGroup("mig", backends)], (cluster) => {
        const wrr = create(ClientSideWeightedRoundRobinSchema, {
          blackoutPeriod: seconds(1),
          weightUpdatePeriod: seconds(0.1),
        });
        const locality = create(WrrLocalitySchema, {
          endpointPickingPolicy: {
            policies: [
              { typedExtensionConfig: { name: "wrr", typedConfig: anyPack(ClientSideWeightedRoundRobinSchema, wrr) } },
            ],
          },
        });
        cluster.loadBalancingPolicy = create(LoadBalancingPolicySchema, {
          policies: [
            create(LoadBalancingPolicy_PolicySchema, {
              typedExtensionConfig: create(TypedExtensionConfigSchema, {
                name: "locality",
                typedConfig: anyPack(WrrLocalitySchema, locality),
              }),
            }),
          ],
        });
      }),
    ]);
    context.startClient({ qps: context.profile.qps });
    const shares: Record<string, number> = {};
    backends.forEach((b, i) => {
      shares[b.name] = 100 / (utilization[i] as number) / (500 + 250 + 125);
    });
    await context.steady(
      "traffic follows the weights A58 computes, each share within 10 %",
      (stats) => {
        if (!stats.complete || stats.numFailures > 0) return `${stats.numFailures} failures`;
        const total = Object.values(stats.rpcsByPeer).reduce((a, b) => a + b, 0);
        const off = Object.entries(shares).filter(
          ([peer, share]) => Math.abs((stats.rpcsByPeer[peer] ?? 0) / total - share) > 0.1 * share,
        );
        return off.length === 0
          ? undefined
          : `shares ${JSON.stringify(stats.rpcsByPeer)} of ${total}, expected ${JSON.stringify(shares)}`;
      },
      context.profile.policyRpcs,
    );
  },
};
