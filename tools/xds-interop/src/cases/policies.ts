// The cases of issue 21 (proxyless features beyond routing): circuit_breaking and timeout as
// doc/xds-test-descriptions.md writes them, and, in the same style, fault_injection, ring_hash affinity, retries,
// weighted round robin from ORCA, and outlier ejection (the document has none of these; each asserts what the
// gRFC promises). Backends are made slow, hung or failing through `rpc-behavior` metadata (rpc-behavior.ts).
import { create } from "@bufbuild/protobuf";
import { anyPack, DurationSchema } from "@bufbuild/protobuf/wkt";
import { LDS_TYPE_URL } from "@xdskit/control-plane";
import {
  CircuitBreakers_ThresholdsSchema,
  CircuitBreakersSchema,
} from "@xdskit/protos/envoy/config/cluster/v3/circuit_breaker_pb";
import {
  type Cluster,
  Cluster_LbPolicy,
  Cluster_RingHashLbConfigSchema,
  LoadBalancingPolicy_PolicySchema,
  LoadBalancingPolicySchema,
} from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { OutlierDetectionSchema } from "@xdskit/protos/envoy/config/cluster/v3/outlier_detection_pb";
import { RoutingPriority } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { TypedExtensionConfigSchema } from "@xdskit/protos/envoy/config/core/v3/extension_pb";
import {
  RetryPolicySchema,
  RouteAction_HashPolicySchema,
  RouteAction_MaxStreamDurationSchema,
} from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import { FaultDelaySchema } from "@xdskit/protos/envoy/extensions/filters/common/fault/v3/fault_pb";
import { FaultAbortSchema, HTTPFaultSchema } from "@xdskit/protos/envoy/extensions/filters/http/fault/v3/fault_pb";
import { HttpFilterSchema } from "@xdskit/protos/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb";
import { ClientSideWeightedRoundRobinSchema } from "@xdskit/protos/envoy/extensions/load_balancing_policies/client_side_weighted_round_robin/v3/client_side_weighted_round_robin_pb";
import { WrrLocalitySchema } from "@xdskit/protos/envoy/extensions/load_balancing_policies/wrr_locality/v3/wrr_locality_pb";
import { FractionalPercentSchema } from "@xdskit/protos/envoy/type/v3/percent_pb";
import type { Backend } from "../backend.js";
import { allGoTo, type BlockCheck, binomialInterval, methodsGoTo } from "../checks.js";
import type { RpcMethod } from "../client-adapter.js";
import type { CaseContext, InteropCase } from "../driver.js";
import { ANY_PATH, backendService, serviceListener, urlMap } from "../resources.js";
import { RPC_BEHAVIOR_HEADER } from "../rpc-behavior.js";
import { DEFAULT_SERVICE, localGroup, names } from "./setup.js";

const seconds = (s: number) =>
  create(DurationSchema, { seconds: BigInt(Math.floor(s)), nanos: Math.round((s % 1) * 1e9) });
const UNARY_PATH = { pathSpecifier: { case: "path" as const, value: "/grpc.testing.TestService/UnaryCall" } };
const EMPTY_PATH = { pathSpecifier: { case: "path" as const, value: "/grpc.testing.TestService/EmptyCall" } };
const behavior = (value: string) => [[RPC_BEHAVIOR_HEADER, value] as const];

/** Waits until `condition()` holds (polled every 50 ms), failing after the profile's wait with `describe()`. */
async function eventually(context: CaseContext, what: string, condition: () => boolean, describe: () => string) {
  const deadline = performance.now() + context.profile.waitMs;
  while (!condition()) {
    context.check(
      performance.now() < deadline,
      () => `${what}: did not hold within ${context.profile.waitMs} ms (${describe()})`,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  context.trace(`${what}: held (${describe()})`);
}

/** Every RPC of the block failed, with `code`. */
function allFailWith(code: number, alsoAccepted: readonly number[] = []): BlockCheck {
  return (stats) => {
    if (!stats.complete) return "the block did not complete in time";
    const codes = Object.keys(stats.failureCodes);
    if (Object.keys(stats.rpcsByPeer).length > 0) return `RPCs succeeded: ${JSON.stringify(stats.rpcsByPeer)}`;
    return codes.includes(String(code)) && codes.every((c) => c === String(code) || alsoAccepted.includes(Number(c)))
      ? undefined
      : `failure codes ${JSON.stringify(stats.failureCodes)}, not all ${[code, ...alsoAccepted].join(" or ")}`;
  };
}

/** Every RPC of the block failed past its deadline, as this client reports it (`CaseContext.deadlineCodes`). */
const allPastDeadline = (context: CaseContext): BlockCheck => {
  const [code = 4, ...others] = context.deadlineCodes;
  return allFailWith(code, others);
};

/**
 * The method's RPCs of the block all failed with `codes[0]` (at least one) or another of `codes`, while the other
 * method's all succeeded.
 */
function methodFailsOtherSucceeds(
  failing: RpcMethod,
  codes: readonly number[],
  succeeding: RpcMethod,
  total: number,
): BlockCheck {
  return (stats) => {
    if (!stats.complete) return "the block did not complete in time";
    const ok = Object.values(stats.rpcsByMethod[succeeding] ?? {}).reduce((a, b) => a + b, 0);
    const failingOk = Object.values(stats.rpcsByMethod[failing] ?? {}).reduce((a, b) => a + b, 0);
    if (failingOk > 0) return `${failingOk} ${failing} RPCs succeeded`;
    const accepted = codes.reduce((sum, code) => sum + (stats.failureCodes[String(code)] ?? 0), 0);
    if (stats.numFailures !== accepted || !stats.failureCodes[String(codes[0])])
      return `failure codes ${JSON.stringify(stats.failureCodes)}, not all ${codes.join(" or ")}`;
    return ok + stats.numFailures === total && ok > 0
      ? undefined
      : `${ok} ${succeeding} succeeded, ${stats.numFailures} failed`;
  };
}

/** RPCs of `method` started and not yet completed. */
function inFlight(load: ReturnType<CaseContext["startClient"]>, method: RpcMethod): number {
  const acc = load.accumulated();
  const done = Object.values(acc.result[method] ?? {}).reduce((a, b) => a + b, 0);
  return (acc.rpcsStarted[method] ?? 0) - done;
}

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
          faultDelaySecifier: { case: "fixedDelay", value: seconds(20) },
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
      // A client that keeps the fault active for its whole delay, after its call ended, delays nothing more for 20 s.
      const perBlock = context.knownBug("max_active_faults_ends_with_call") === undefined ? 1 : 0;
      await context.steady(
        `max_active_faults: at most one RPC at a time is delayed past its deadline (${perBlock} to ${most} of ${rpcs}), the rest succeed`,
        delayedFew(perBlock),
        rpcs,
      );
    }
  },
};

export const ringHashAffinity: InteropCase = {
  name: "ring_hash_affinity",
  failOnFailedRpcs: true,
  async run(context) {
    const backends = await context.world.startGroup("mig", 4);
    const publish = (group: readonly Backend[]) =>
      context.world.publish([
        serviceListener(),
        urlMap([
          {
            match: ANY_PATH,
            cluster: DEFAULT_SERVICE,
            editAction: (a) => {
              a.hashPolicy = [
                create(RouteAction_HashPolicySchema, {
                  policySpecifier: { case: "header", value: { headerName: "x-session" } },
                }),
              ];
            },
          },
        ]),
        ...backendService(DEFAULT_SERVICE, [localGroup("mig", group)], (cluster) => {
          cluster.lbPolicy = Cluster_LbPolicy.RING_HASH;
          // One ring entry per backend: removing one changes nothing on the ring but its own entry.
          cluster.lbConfig = {
            case: "ringHashLbConfig",
            value: create(Cluster_RingHashLbConfigSchema, { minimumRingSize: 1n }),
          };
        }),
      ]);
    await publish(backends);
    // Two sessions: UnaryCalls carry one header value, EmptyCalls another, chosen so that the two land on
    // different backends (a client that sent everything to one backend could never pass).
    const sessionOf = (n: number) => (n === 0 ? "session-two" : `session-two-${n}`);
    const load = context.startClient({
      qps: context.profile.qps,
      types: ["UnaryCall", "EmptyCall"],
      metadata: { UnaryCall: [["x-session", "session-one"]], EmptyCall: [["x-session", sessionOf(0)]] },
    });
    const owners = (stats: Parameters<BlockCheck>[0]) =>
      (["UnaryCall", "EmptyCall"] as const).map((m) => Object.keys(stats.rpcsByMethod[m] ?? {}));
    const eachOnOne: BlockCheck = (stats) => {
      if (!stats.complete || stats.numFailures > 0) return `${stats.numFailures} failures`;
      const [u, e] = owners(stats);
      return u?.length === 1 && e?.length === 1 ? undefined : `sessions spread: ${JSON.stringify(stats.rpcsByMethod)}`;
    };
    let first = await context.steady(
      "each session's RPCs all reach one backend",
      eachOnOne,
      context.profile.policyRpcs,
    );
    // With four backends, another value has a one-in-four chance of the first session's backend: twenty tries leave
    // a correct client a chance of 1 in 10^12 of failing here.
    for (let n = 1; owners(first)[0]?.[0] === owners(first)[1]?.[0]; n++) {
      if (n > 20)
        throw new Error(`every EmptyCall session value reached ${owners(first)[0]?.[0]}, the UnaryCall one's backend`);
      load.configure({
        types: ["UnaryCall", "EmptyCall"],
        metadata: { UnaryCall: [["x-session", "session-one"]], EmptyCall: [["x-session", sessionOf(n)]] },
        timeoutMs: context.profile.rpcTimeoutMs,
      });
      first = await context.steady(
        `with EmptyCall session ${sessionOf(n)}, each session's RPCs all reach one backend`,
        eachOnOne,
        context.profile.policyRpcs,
      );
    }
    const [[unaryOwner], [emptyOwner]] = owners(first) as [string[], string[]];
    // Remove a backend that owns neither session: both stay where they are.
    const bystander = backends.find((b) => b.name !== unaryOwner && b.name !== emptyOwner) as Backend;
    const rest = backends.filter((b) => b !== bystander);
    await publish(rest);
    await context.steady(
      `after ${bystander.name} is removed, each session stays on its backend`,
      methodsGoTo({ UnaryCall: [unaryOwner as string], EmptyCall: [emptyOwner as string] }),
      context.profile.policyRpcs,
    );
    // Remove the backend of the UnaryCall session: it moves to one other backend; the other session stays.
    await publish(rest.filter((b) => b.name !== unaryOwner));
    await context.steady(
      `after ${unaryOwner} is removed, its session moves to one backend and the other session stays`,
      (stats) => {
        if (!stats.complete || stats.numFailures > 0) return `${stats.numFailures} failures`;
        const [u, e] = owners(stats);
        if (u?.length !== 1 || u[0] === unaryOwner) return `UnaryCall session on ${JSON.stringify(u)}`;
        if (e?.length !== 1 || e[0] !== emptyOwner) return `EmptyCall session moved: ${JSON.stringify(e)}`;
        return undefined;
      },
      context.profile.policyRpcs,
    );
  },
};

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

export const POLICY_CASES: readonly InteropCase[] = [
  circuitBreaking,
  timeout,
  faultInjection,
  ringHashAffinity,
  retries,
  weightedRoundRobin,
  outlierEjection,
];
