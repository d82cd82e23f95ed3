// retry, in the style of doc/xds-test-descriptions.md (which has no such case): the route's retry policy
// (gRFC A44).
import { create } from "@bufbuild/protobuf";
import { RetryPolicySchema } from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import { allGoTo } from "../checks.js";
import type { InteropCase } from "../driver.js";
import { ANY_PATH, backendService, serviceListener, urlMap } from "../resources.js";
import { allFailWith, behavior } from "./policy-support.js";
import { DEFAULT_SERVICE, localGroup, names } from "./setup.js";

export const retries: InteropCase = {
  name: "retry",
  failOnFailedRpcs: false,
  async run(context) {
    const backends = await context.world.startGroup("mig", 2);
    const publish = (retry: boolean) =>
      context.world.publish([
        serviceListener(),
        urlMap([
          {
            match: ANY_PATH,
            cluster: DEFAULT_SERVICE,
            editAction: (a) => {
              if (retry) a.retryPolicy = create(RetryPolicySchema, { retryOn: "unavailable", numRetries: 2 });
            },
          },
        ]),
        ...backendService(DEFAULT_SERVICE, [localGroup("mig", backends)]),
      ]);
    await publish(false);
    // Every backend fails a call's first attempt with UNAVAILABLE and serves its retry (grpc-previous-rpc-attempts 1).
    context.startClient({
      qps: context.profile.qps,
      metadata: { UnaryCall: behavior("succeed-on-retry-attempt-1,error-code-14") },
    });
    await context.until(
      "without a retry policy, every RPC fails UNAVAILABLE",
      allFailWith(14),
      context.profile.checkRpcs,
    );
    await publish(true);
    await context.steady(
      "with retry_on unavailable, every RPC succeeds on its retry, on either backend",
      allGoTo(names(backends)),
      context.profile.policyRpcs,
    );
  },
};
