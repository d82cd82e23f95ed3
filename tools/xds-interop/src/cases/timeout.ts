// timeout as doc/xds-test-descriptions.md writes it: the route's max_stream_duration (gRFC A31) ends the RPCs that
// outlive it.
import { create } from "@bufbuild/protobuf";
import { RouteAction_MaxStreamDurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import { allGoTo } from "../checks.js";
import type { InteropCase } from "../driver.js";
import { ANY_PATH, backendService, serviceListener, urlMap } from "../resources.js";
import { allPastDeadline, behavior, methodFailsOtherSucceeds, seconds, UNARY_PATH } from "./policy-support.js";
import { DEFAULT_SERVICE, localGroup, names } from "./setup.js";

export const timeout: InteropCase = {
  name: "timeout",
  failOnFailedRpcs: false,
  async run(context) {
    // The document's durations, scaled by the profile (ci: a quarter).
    const t = context.profile.timeScale;
    const backends = await context.world.startGroup("mig", 2);
    await context.world.publish([
      serviceListener(),
      urlMap([
        {
          match: UNARY_PATH,
          cluster: DEFAULT_SERVICE,
          editAction: (a) => {
            a.maxStreamDuration = create(RouteAction_MaxStreamDurationSchema, { maxStreamDuration: seconds(3 * t) });
          },
        },
        { match: ANY_PATH, cluster: DEFAULT_SERVICE },
      ]),
      ...backendService(DEFAULT_SERVICE, [localGroup("mig", backends)]),
    ]);
    const rpcs = context.profile.checkRpcs;
    const load = context.startClient({ qps: context.profile.qps });
    await context.until("every backend receives RPCs", allGoTo(names(backends)), rpcs);
    if (!context.knownBug("app_timeout_exceeded")) {
      load.configure({
        types: ["UnaryCall"],
        metadata: { UnaryCall: behavior(`sleep-${2 * t}`) },
        timeoutMs: 1000 * t,
      });
      await context.steady("app_timeout_exceeded: calls sleeping twice their deadline", allPastDeadline(context), rpcs);
    }
    if (!context.knownBug("timeout_not_exceeded")) {
      load.configure({ types: ["UnaryCall"], timeoutMs: context.profile.rpcTimeoutMs });
      await context.steady("timeout_not_exceeded", allGoTo(names(backends)), rpcs);
    }
    if (!context.knownBug("timeout_exceeded") && !context.knownBug("timeout_different_route")) {
      load.configure({
        types: ["UnaryCall", "EmptyCall"],
        metadata: { UnaryCall: behavior(`sleep-${4 * t}`), EmptyCall: behavior(`sleep-${4 * t}`) },
        timeoutMs: context.profile.rpcTimeoutMs,
      });
      await context.steady(
        "timeout_exceeded and timeout_different_route: UnaryCalls stop at the route's max_stream_duration, EmptyCalls succeed",
        methodFailsOtherSucceeds("UnaryCall", context.deadlineCodes, "EmptyCall", rpcs),
        rpcs,
      );
    }
  },
};
