// fault_injection, in the style of doc/xds-test-descriptions.md (which has no such case): the fault filter's delays
// and aborts (gRFC A33), as the gRFC promises them.
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { LDS_TYPE_URL } from "@xdskit/control-plane";
import { FaultDelaySchema } from "@xdskit/protos/envoy/extensions/filters/common/fault/v3/fault_pb";
import { FaultAbortSchema, HTTPFaultSchema } from "@xdskit/protos/envoy/extensions/filters/http/fault/v3/fault_pb";
import { HttpFilterSchema } from "@xdskit/protos/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb";
import { FractionalPercentSchema } from "@xdskit/protos/envoy/type/v3/percent_pb";
import { allGoTo, type BlockCheck, binomialInterval } from "../checks.js";
import type { InteropCase } from "../driver.js";
import { ANY_PATH, backendService, serviceListener, urlMap } from "../resources.js";
import { allFailWith, allPastDeadline, seconds } from "./policy-support.js";
import { DEFAULT_SERVICE, localGroup, names } from "./setup.js";

const FAULT_FILTER = "envoy.filters.http.fault";
const PERCENT = (numerator: number) => create(FractionalPercentSchema, { numerator });

export const faultInjection: InteropCase = {
  name: "fault_injection",
  failOnFailedRpcs: false,
  async run(context) {
    const backends = await context.world.startGroup("mig", 2);
    /** The Listener's fault filter with `fault` as its config, over the default route. */
    // After the first, each config waits for the client's ACK of the Listener (a NACK fails the case with its detail).
    let acked: string[] = [];
    let generation = 0;
    const routeChanges = context.knownBug("filter_update_without_route_update") !== undefined;
    const publish = (fault: Parameters<typeof create<typeof HTTPFaultSchema>>[1]) =>
      context.world.publish(
        [
          serviceListener([
            create(HttpFilterSchema, {
              name: FAULT_FILTER,
              configType: { case: "typedConfig", value: anyPack(HTTPFaultSchema, create(HTTPFaultSchema, fault)) },
            }),
          ]),
          urlMap([
            {
              // A client that applies a changed filter config only with a route update gets a new route each time.
              match: { ...ANY_PATH, caseSensitive: routeChanges ? (generation++ & 1) === 0 : true },
              cluster: DEFAULT_SERVICE,
            },
          ]),
          ...backendService(DEFAULT_SERVICE, [localGroup("mig", backends)]),
        ],
        acked,
      );
    const rpcs = context.profile.policyRpcs;
    await publish({});
    acked = [LDS_TYPE_URL];
    const load = context.startClient({ qps: context.profile.qps });
    await context.until("every backend receives RPCs", allGoTo(names(backends)), context.profile.checkRpcs);
    if (!context.knownBug("always_abort")) {
      await publish({
        abort: create(FaultAbortSchema, { errorType: { case: "grpcStatus", value: 16 }, percentage: PERCENT(100) }),
      });
      await context.steady("always_abort: every RPC fails UNAUTHENTICATED", allFailWith(16), context.profile.checkRpcs);
    }
    if (!context.knownBug("always_delay")) {
      load.configure({ types: ["UnaryCall"], timeoutMs: 500 });
      await publish({
        delay: create(FaultDelaySchema, {
          faultDelaySecifier: { case: "fixedDelay", value: seconds(2) },
          percentage: PERCENT(100),
        }),
      });
      await context.steady(
        "always_delay: every RPC exceeds its 0.5 s deadline",
        allPastDeadline(context),
        context.profile.checkRpcs,
      );
      load.configure({ types: ["UnaryCall"], timeoutMs: context.profile.rpcTimeoutMs });
    }
    if (!context.knownBug("percentage_abort")) {
      await publish({
        abort: create(FaultAbortSchema, { errorType: { case: "grpcStatus", value: 14 }, percentage: PERCENT(50) }),
      });
      const [low, high] = binomialInterval(rpcs, 0.5, context.profile.alpha);
      await context.steady(
        `percentage_abort: half the RPCs fail (within [${low}, ${high}] of ${rpcs})`,
        (stats) =>
          !stats.complete
            ? "the block did not complete in time"
            : stats.numFailures < low ||
                stats.numFailures > high ||
                stats.numFailures !== (stats.failureCodes["14"] ?? 0)
              ? `${stats.numFailures} failures (${JSON.stringify(stats.failureCodes)})`
              : undefined,
        rpcs,
      );
    }
    if (!context.knownBug("max_active_faults")) {
      // Every RPC would be delayed past its 1 s deadline, but only one fault may be active at a time: the others
      // go through at once. The delayed RPC fails at its deadline, and its fault ends with it (C-core, grpc-go):
      // the next RPC takes the fault, about one failure per second of a block, each past its deadline. A client
      // that applies no fault fails nothing; one that ignores max_active_faults fails everything.
      load.configure({ types: ["UnaryCall"], timeoutMs: 1000 });
      await publish({
        delay: create(FaultDelaySchema, {
          // Five times the deadline: past it for certain, and a peer that keeps the fault after its call (below)
          // holds it 5 s, not 20.
          faultDelaySecifier: { case: "fixedDelay", value: seconds(5) },
          percentage: PERCENT(100),
        }),
        maxActiveFaults: 1,
      });
      // Twice the block's length in seconds, plus the RPCs of a block a slow machine stretches.
      const most = Math.ceil(rpcs / context.profile.qps) * 2 + 3;
      const delayedFew =
        (least: number): BlockCheck =>
        (stats) => {
          if (!stats.complete) return "the block did not complete in time";
          const ok = Object.values(stats.rpcsByPeer).reduce((a, b) => a + b, 0);
          const pastDeadline = context.deadlineCodes.reduce((sum, code) => sum + (stats.failureCodes[code] ?? 0), 0);
          if (pastDeadline !== stats.numFailures)
            return `failures other than deadlines: ${JSON.stringify(stats.failureCodes)}`;
          if (stats.numFailures < least) return `no RPC was delayed: ${ok} of ${rpcs} succeeded`;
          return stats.numFailures <= most && ok === rpcs - stats.numFailures
            ? undefined
            : `only ${ok} of ${rpcs} succeeded (${JSON.stringify(stats.failureCodes)})`;
        };
      await context.until("max_active_faults: the first delayed RPC fails at its deadline", delayedFew(1), rpcs);
      // A client that keeps the fault active for its whole delay, after its call ended, delays nothing more for 5 s.
      const perBlock = context.knownBug("max_active_faults_ends_with_call") === undefined ? 1 : 0;
      await context.steady(
        `max_active_faults: at most one RPC at a time is delayed past its deadline (${perBlock} to ${most} of ${rpcs}), the rest succeed`,
        delayedFew(perBlock),
        rpcs,
      );
    }
  },
};
