// Durations past Node's timer limit (2^31-1 ms, about 24.8 days), over real HTTP/2 on 127.0.0.1 and routed by the
// control plane. Node alone fires such a timer after 1 ms (with a TimeoutOverflowWarning): a 30-day deadline would
// fail every call at once, a 30-day policy interval would run every millisecond. Each case: calls with a 30-day
// deadline, a 30-day defaultTimeoutMs, a route's max_stream_duration of 30 days and of 10,000 years, and a call
// waiting 30 days for its configuration succeed, with a grpc-timeout of at most 8 digits (unary calls on the lean
// call, server streams on the connect path); an outlier-detection interval and a WRR weight-update period of 30 days
// never fire during the test. No TimeoutOverflowWarning is emitted.
import { create, toBinary } from "@bufbuild/protobuf";
import { anyPack, DurationSchema, StringValueSchema } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import type { ManagementServer } from "@xdskit/control-plane";
import { type Clock, systemClock } from "@xdskit/orca-lrs-bridge";
import {
  type Cluster,
  LoadBalancingPolicy_PolicySchema,
  LoadBalancingPolicySchema,
} from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { OutlierDetectionSchema } from "@xdskit/protos/envoy/config/cluster/v3/outlier_detection_pb";
import { TypedExtensionConfigSchema } from "@xdskit/protos/envoy/config/core/v3/extension_pb";
import { RouteAction_MaxStreamDurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import type { RouteConfiguration } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import { ClientSideWeightedRoundRobinSchema } from "@xdskit/protos/envoy/extensions/load_balancing_policies/client_side_weighted_round_robin/v3/client_side_weighted_round_robin_pb";
import { WrrLocalitySchema } from "@xdskit/protos/envoy/extensions/load_balancing_policies/wrr_locality/v3/wrr_locality_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { XdsTransport, XdsTransportOptions } from "../src/index.js";
import { createXdsTransportWithInternals } from "../src/internal.js";
import { MAX_TIMER_DELAY_MS } from "../src/shared/long-timer.js";
import { EchoService } from "./support/echo-service.js";
import { clientFor, simpleSnapshot, startControlPlane } from "./support/harness.js";
import { answerOk, type HostileBackend, startHttp2Backend } from "./support/hostile-backends.js";

type Echo = {
  unary(request: { value: string }, options?: object): Promise<{ value: string }>;
  serverStream(request: { value: string }, options?: object): AsyncIterable<{ value: string }>;
};

const DAY_MS = 24 * 60 * 60 * 1000;
const YEARS_10K_S = 10_000n * 365n * 24n * 3600n;
const UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1 };

/** The milliseconds a grpc-timeout says; fails unless it has at most 8 digits and a unit. */
function timeoutMsOf(header: string | undefined): number {
  const match = /^(\d{1,8})([HMSm])$/.exec(header ?? "");
  if (match === null) throw new Error(`grpc-timeout "${header}" is not at most 8 digits and a unit`);
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

describe("durations past Node's timer limit", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let backend: HostileBackend;
  /** The grpc-timeout of each request the backend got, in order. */
  const timeouts: (string | undefined)[] = [];
  const transports: XdsTransport[] = [];
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  let next = 0;

  beforeAll(async () => {
    process.on("warning", onWarning);
    server = await startControlPlane();
    client = clientFor(server);
    const message = toBinary(StringValueSchema, create(StringValueSchema, { value: "ok" }));
    backend = await startHttp2Backend((stream, _socket, headers) => {
      timeouts.push(headers["grpc-timeout"] as string | undefined);
      answerOk(stream, message);
    });
  });
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
    timeouts.length = 0;
    expect(warnings.splice(0).filter((w) => w.name === "TimeoutOverflowWarning")).toEqual([]);
  });
  afterAll(async () => {
    process.off("warning", onWarning);
    await client.close();
    await backend.close();
    await server.close();
  });

  /** A transport to a listener of its own over `backend`, its route and cluster edited; `serve: false` publishes nothing. */
  function echoTo(
    options: Partial<XdsTransportOptions> & {
      readonly route?: (route: RouteConfiguration) => void;
      readonly cluster?: (cluster: Cluster) => void;
      readonly clock?: Clock;
      readonly serve?: boolean;
    } = {},
  ): { echo: Echo; publish: () => void } {
    const { route, cluster, clock, serve = true, ...transportOptions } = options;
    const name = `long-${next++}`;
    const publish = () => {
      const resources = simpleSnapshot(name, `${name}-cluster`, [{ zone: "z1", endpoints: [backend.address] }]);
      route?.(resources[1] as RouteConfiguration);
      cluster?.(resources[2] as Cluster);
      // Added to what is served: the transports of one test run side by side.
      server.setResources(resources);
    };
    if (serve) publish();
    const transport = createXdsTransportWithInternals(
      { target: `xds:///${name}`, client, ...transportOptions },
      clock === undefined ? {} : { clock },
    );
    transports.push(transport);
    return { echo: createClient(EchoService, transport) as unknown as Echo, publish };
  }

  /** A unary call and a server stream on `echo` succeed; the grpc-timeouts they sent (none: none). */
  async function bothSucceed(echo: Echo, options: object = {}): Promise<(string | undefined)[]> {
    expect(await echo.unary({ value: "x" }, options)).toMatchObject({ value: "ok" });
    const streamed: string[] = [];
    for await (const message of echo.serverStream({ value: "x" }, options)) streamed.push(message.value);
    expect(streamed).toEqual(["ok"]);
    return timeouts.splice(0);
  }

  const maxStreamDuration = (duration: { seconds: bigint }) => (route: RouteConfiguration) => {
    const action = route.virtualHosts[0]?.routes[0]?.action;
    if (action?.case !== "route") throw new Error("route action expected");
    action.value.maxStreamDuration = create(RouteAction_MaxStreamDurationSchema, {
      maxStreamDuration: create(DurationSchema, duration),
    });
  };

  it("a call with a 30-day deadline succeeds, and says so in a grpc-timeout of at most 8 digits", async () => {
    const { echo } = echoTo();
    const sent = (await bothSucceed(echo, { timeoutMs: 30 * DAY_MS })).map(timeoutMsOf);
    // Rounded up to whole seconds: "2592000S", or a second less once a millisecond has passed.
    for (const ms of sent) expect(ms).toBeGreaterThan(30 * DAY_MS - 2_000);
    for (const ms of sent) expect(ms).toBeLessThanOrEqual(30 * DAY_MS);
  });

  it("so does a call under a defaultTimeoutMs of 30 days", async () => {
    const { echo } = echoTo({ defaultTimeoutMs: 30 * DAY_MS });
    const sent = (await bothSucceed(echo)).map(timeoutMsOf);
    for (const ms of sent) expect(ms).toBeGreaterThan(30 * DAY_MS - 2_000);
  });

  it("a route's max_stream_duration of 30 days, or of 10,000 years, does not fail its calls", async () => {
    const month = echoTo({ route: maxStreamDuration({ seconds: 30n * 24n * 3600n }) });
    for (const ms of (await bothSucceed(month.echo)).map(timeoutMsOf)) expect(ms).toBeGreaterThan(30 * DAY_MS - 2_000);
    const ages = echoTo({ route: maxStreamDuration({ seconds: YEARS_10K_S }) });
    // 87,600,000 hours: eight digits.
    expect(await bothSucceed(ages.echo)).toEqual(["87600000H", "87600000H"]);
  });

  it("a call waiting for its configuration under a 30-day deadline waits, then succeeds", async () => {
    const { echo, publish } = echoTo({ serve: false });
    let settled = false;
    const call = echo.unary({ value: "x" }, { timeoutMs: 30 * DAY_MS }).finally(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toBe(false);
    publish();
    expect(await call).toMatchObject({ value: "ok" });
  });

  it("an outlier-detection interval and a WRR weight-update period of 30 days never fire while calls run", async () => {
    // The transport's real clock, observed: each timer the policies set, and each one that fired.
    const delays: number[] = [];
    let firedLong = 0;
    const clock: Clock = {
      now: () => systemClock.now(),
      setTimeout: (callback, ms) => {
        delays.push(ms);
        return systemClock.setTimeout(() => {
          if (ms > MAX_TIMER_DELAY_MS) firedLong++;
          callback();
        }, ms);
      },
      clearTimeout: (handle) => systemClock.clearTimeout(handle),
    };
    const interval = create(DurationSchema, { seconds: 30n * 24n * 3600n });
    const outlier = echoTo({
      clock,
      cluster: (cluster) => {
        cluster.outlierDetection = create(OutlierDetectionSchema, { interval });
      },
    });
    const wrr = echoTo({
      clock,
      cluster: (cluster) => {
        const policy = create(ClientSideWeightedRoundRobinSchema, { weightUpdatePeriod: interval });
        const locality = create(WrrLocalitySchema, {
          endpointPickingPolicy: {
            policies: [
              create(LoadBalancingPolicy_PolicySchema, {
                typedExtensionConfig: create(TypedExtensionConfigSchema, {
                  name: "wrr",
                  typedConfig: anyPack(ClientSideWeightedRoundRobinSchema, policy),
                }),
              }),
            ],
          },
        });
        cluster.loadBalancingPolicy = create(LoadBalancingPolicySchema, {
          policies: [
            create(LoadBalancingPolicy_PolicySchema, {
              typedExtensionConfig: create(TypedExtensionConfigSchema, {
                name: "loc",
                typedConfig: anyPack(WrrLocalitySchema, locality),
              }),
            }),
          ],
        });
      },
    });
    expect(await bothSucceed(outlier.echo)).toEqual([undefined, undefined]);
    expect(await bothSucceed(wrr.echo)).toEqual([undefined, undefined]);
    // Both policies armed their 30-day timers.
    expect(delays.filter((ms) => ms === 30 * DAY_MS).length).toBeGreaterThanOrEqual(2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(firedLong).toBe(0);
  });
});
