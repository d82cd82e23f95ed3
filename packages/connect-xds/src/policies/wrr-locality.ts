// xds_wrr_locality (A52): turns the localities of its endpoints into a weighted_target config, one target per
// locality (named by its A78 label, weighted by the locality's weight) running the configured endpoint-picking
// policy. Endpoints must carry their locality and have its label first in their path.
import { Code, ConnectError } from "@connectrpc/connect";
import {
  failingPicker,
  type LbHelper,
  type LbPolicy,
  type LbPolicyFactory,
  type LbPolicyUpdate,
} from "../balancer/lb-policy.js";
import { objectConfig, policyList } from "./child-helper.js";
import { type WeightedTargetConfig, weightedTargetPolicy } from "./weighted-target.js";

export interface WrrLocalityConfig {
  readonly childPolicy: readonly unknown[];
}

class WrrLocality implements LbPolicy<WrrLocalityConfig> {
  private child: LbPolicy<WeightedTargetConfig> | undefined;

  constructor(private readonly helper: LbHelper) {}

  update({ config, endpoints, resolutionNote }: LbPolicyUpdate<WrrLocalityConfig>): void {
    const targets = new Map<string, { weight: number; childPolicy: readonly unknown[] }>();
    for (const endpoint of endpoints) {
      const locality = endpoint.locality;
      if (locality === undefined) {
        const error = new ConnectError("xds_wrr_locality: an endpoint has no locality", Code.Unavailable);
        this.helper.updateState("TRANSIENT_FAILURE", failingPicker(error));
        return;
      }
      if (!targets.has(locality.label)) {
        targets.set(locality.label, { weight: locality.weight, childPolicy: config.childPolicy });
      }
    }
    this.child ??= weightedTargetPolicy.create(this.helper);
    this.child.update({
      config: { targets },
      endpoints,
      ...(resolutionNote === undefined ? {} : { resolutionNote }),
    });
  }

  exitIdle(): void {
    this.child?.exitIdle();
  }

  close(): void {
    this.child?.close();
    this.child = undefined;
  }
}

export const wrrLocalityPolicy: LbPolicyFactory<WrrLocalityConfig> = {
  name: "xds_wrr_locality_experimental",
  typeNames: ["envoy.extensions.load_balancing_policies.wrr_locality.v3.WrrLocality"],
  parseConfig(json) {
    return { childPolicy: policyList(objectConfig(json, "xds_wrr_locality config").childPolicy, "childPolicy") };
  },
  create: (helper) => new WrrLocality(helper),
};
