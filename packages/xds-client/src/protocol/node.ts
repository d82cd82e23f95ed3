import { create, type JsonObject } from "@bufbuild/protobuf";
import { type Node, NodeSchema } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type { NodeConfig } from "../bootstrap/bootstrap-types.js";

/** Client features every request advertises. */
export const CLIENT_FEATURES: readonly string[] = [
  "envoy.lb.does_not_support_overprovisioning",
  "xds.config.resource-in-sotw",
];

/** The Node message sent on the first request of each ADS stream. */
export function buildNode(config: NodeConfig): Node {
  return create(NodeSchema, {
    id: config.id,
    cluster: config.cluster,
    ...(config.locality === undefined ? {} : { locality: config.locality }),
    ...(config.metadata === undefined ? {} : { metadata: config.metadata as JsonObject }),
    userAgentName: config.userAgentName,
    userAgentVersionType: { case: "userAgentVersion", value: config.userAgentVersion },
    clientFeatures: [...CLIENT_FEATURES],
  });
}
