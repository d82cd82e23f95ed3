// circuit_breaking as doc/xds-test-descriptions.md writes it: the cluster's max_requests caps the RPCs in flight
// (gRFC A32).
import { create } from "@bufbuild/protobuf";
import {
  CircuitBreakers_ThresholdsSchema,
  CircuitBreakersSchema,
} from "@xdskit/protos/envoy/config/cluster/v3/circuit_breaker_pb";
import type { Cluster } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { RoutingPriority } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type { InteropCase } from "../driver.js";
import { backendService, serviceListener, urlMap } from "../resources.js";
import { behavior, EMPTY_PATH, eventually, inFlight, UNARY_PATH } from "./policy-support.js";
import { localGroup } from "./setup.js";

export const circuitBreaking: InteropCase = {
  name: "circuit_breaking",
  failOnFailedRpcs: false,
  async run(context) {
    const sizes = context.profile.circuitBreaking;
    const [g1, g2] = [await context.world.startGroup("mig1", 2), await context.world.startGroup("mig2", 2)];
    const limit = (max: number) => (cluster: Cluster) => {
      cluster.circuitBreakers = create(CircuitBreakersSchema, {
        thresholds: [create(CircuitBreakers_ThresholdsSchema, { priority: RoutingPriority.DEFAULT, maxRequests: max })],
      });
    };
    const publish = (unaryMax: number) =>
      context.world.publish([
        serviceListener(),
        urlMap([
          { match: UNARY_PATH, cluster: "service-1" },
          { match: EMPTY_PATH, cluster: "service-2" },
        ]),
        ...backendService("service-1", [localGroup("mig1", g1)], limit(unaryMax)),
        ...backendService("service-2", [localGroup("mig2", g2)], limit(sizes.empty)),
      ]);
    await publish(sizes.unary);
    // Every RPC stays open until its (long) deadline: the calls in flight pile up to each cluster's max_requests.
    const load = context.startClient({
      qps: context.profile.qps,
      types: ["UnaryCall", "EmptyCall"],
      metadata: { UnaryCall: behavior("keep-open"), EmptyCall: behavior("keep-open") },
      timeoutMs: 600_000,
      maxInFlight: Number.POSITIVE_INFINITY,
    });
    const counts = () => `UnaryCall ${inFlight(load, "UnaryCall")}, EmptyCall ${inFlight(load, "EmptyCall")}`;
    await eventually(
      context,
      `${sizes.unary} UnaryCall and ${sizes.empty} EmptyCall RPCs in flight`,
      () => inFlight(load, "UnaryCall") === sizes.unary && inFlight(load, "EmptyCall") === sizes.empty,
      counts,
    );
    // Steady: another second of sending does not push either past its limit.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    context.check(
      inFlight(load, "UnaryCall") === sizes.unary && inFlight(load, "EmptyCall") === sizes.empty,
      () => `not steady: ${counts()}`,
    );
    await publish(sizes.updated);
    await eventually(
      context,
      `${sizes.updated} UnaryCall RPCs in flight after the update`,
      () => inFlight(load, "UnaryCall") === sizes.updated,
      counts,
    );
  },
};
