// outlier_ejection, in the style of doc/xds-test-descriptions.md (which has no such case): a backend that fails its
// RPCs is ejected by failure percentage (gRFC A50).
import { create } from "@bufbuild/protobuf";
import { OutlierDetectionSchema } from "@xdskit/protos/envoy/config/cluster/v3/outlier_detection_pb";
import type { Backend } from "../backend.js";
import { allGoTo } from "../checks.js";
import type { InteropCase } from "../driver.js";
import { ANY_PATH, backendService, serviceListener, urlMap } from "../resources.js";
import { behavior, seconds } from "./policy-support.js";
import { DEFAULT_SERVICE, localGroup, names } from "./setup.js";

export const outlierEjection: InteropCase = {
  name: "outlier_ejection",
  failOnFailedRpcs: false,
  async run(context) {
    const backends = await context.world.startGroup("mig", 5);
    const bad = backends[0] as Backend;
    await context.world.publish([
      serviceListener(),
      urlMap([{ match: ANY_PATH, cluster: DEFAULT_SERVICE }]),
      ...backendService(DEFAULT_SERVICE, [localGroup("mig", backends)], (cluster) => {
        cluster.outlierDetection = create(OutlierDetectionSchema, {
          interval: seconds(1),
          baseEjectionTime: seconds(30),
          maxEjectionPercent: 20,
          enforcingSuccessRate: 0,
          failurePercentageThreshold: 50,
          enforcingFailurePercentage: 100,
          failurePercentageMinimumHosts: 3,
          failurePercentageRequestVolume: 10,
        });
      }),
    ]);
    context.startClient({
      qps: context.profile.qps,
      metadata: { UnaryCall: behavior(`hostname=${bad.name} error-code-14`) },
    });
    await context.until(
      "the failing backend gets RPCs (and fails them) before it is ejected",
      (stats) => ((stats.failureCodes["14"] ?? 0) > 0 ? undefined : "no failure yet"),
      context.profile.checkRpcs,
    );
    await context.steady(
      "once ejected, the failing backend gets no RPC and every RPC succeeds",
      allGoTo(names(backends.slice(1))),
      context.profile.policyRpcs,
    );
  },
};
