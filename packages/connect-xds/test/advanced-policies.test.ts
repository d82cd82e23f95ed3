// The policies of issue 21 over real HTTP/2: the control plane on 127.0.0.1 serves clusters that select ring_hash,
// least_request, weighted_round_robin (with per-call ORCA from the backends), outlier detection and a max_requests
// circuit breaker; Connect backends answer with their names. Each case changes the cluster, then asserts where
// calls went.
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import {
  buildClusterLoadAssignment,
  buildListener,
  createManagementServer,
  type ManagementServer,
} from "@xdskit/control-plane";
import { createServerMetricRecorder, orcaServiceRoutes } from "@xdskit/orca-lrs-bridge";
import {
  CircuitBreakers_ThresholdsSchema,
  CircuitBreakersSchema,
} from "@xdskit/protos/envoy/config/cluster/v3/circuit_breaker_pb";
import {
  type Cluster,
  Cluster_LbPolicy,
  Cluster_LeastRequestLbConfigSchema,
  Cluster_RingHashLbConfigSchema,
} from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { OutlierDetectionSchema } from "@xdskit/protos/envoy/config/cluster/v3/outlier_detection_pb";
import { RoutingPriority } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { ConfigSourceSchema } from "@xdskit/protos/envoy/config/core/v3/config_source_pb";
import {
  FilterConfigSchema,
  RetryPolicySchema,
  RouteAction_HashPolicySchema,
} from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import type { RouteConfiguration } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import { FaultDelaySchema } from "@xdskit/protos/envoy/extensions/filters/common/fault/v3/fault_pb";
import { FaultAbortSchema, HTTPFaultSchema } from "@xdskit/protos/envoy/extensions/filters/http/fault/v3/fault_pb";
import type { HttpFilter } from "@xdskit/protos/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { EchoService } from "./support/echo-service.js";
import { clientFor, simpleSnapshot } from "./support/harness.js";
import { ALL, faultFilter, orcaTrailer, routeAction, seconds, wrrPolicy } from "./support/policy-config.js";

type Echo = {
  unary(request: { value: string }, options?: { headers?: Record<string, string> }): Promise<{ value: string }>;
};

/** Fails every call with UNAVAILABLE, counting them (Trailers-Only from a backend started with `trailersOnly`). */
const failures = { count: 0 };
const failing: Interceptor = () => async () => {
  failures.count++;
  throw new ConnectError("backend is broken", Code.Unavailable);
};

describe("issue 21 policies over HTTP/2", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let transport: XdsTransport | undefined;
  const backends: Backend[] = [];

  beforeAll(async () => {
    // Load reports every second, for the circuit breaker's drops.
    server = await createManagementServer({ lrsPolicy: { clusters: "all", intervalMs: 1000 } });
    client = clientFor(server);
  });
  afterEach(async () => {
    await transport?.close();
    transport = undefined;
    await Promise.all(backends.splice(0).map((b) => b.close()));
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  /** Serves listener `name` over `cluster` built by `edit`, with `backends` in one locality; returns a client. */
  function serve(
    name: string,
    edit: (cluster: Cluster, route: RouteConfiguration) => void,
    httpFilters: readonly HttpFilter[] = [],
  ): Echo {
    const resources = simpleSnapshot(name, `${name}-cluster`, [
      { zone: "z1", endpoints: backends.map((b) => b.address) },
    ]);
    resources[0] = buildListener({ name, routeConfigName: `${name}-route`, httpFilters });
    edit(resources[2] as Cluster, resources[1] as RouteConfiguration);
    server.setSnapshot(resources);
    transport = createXdsTransport({ target: `xds:///${name}`, client });
    return createClient(EchoService, transport) as unknown as Echo;
  }

  /** Backend names serving `n` calls (with headers from `headersFor(i)`). */
  async function served(echo: Echo, n: number, headersFor: (i: number) => Record<string, string> = () => ({})) {
    const names: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = await echo.unary({ value: `${i}` }, { headers: headersFor(i) });
      names.push(r.value.split(":")[0] as string);
    }
    return names;
  }

  it("ring_hash: a header value always reaches the same backend; removing a backend moves only its keys", async () => {
    backends.push(...(await Promise.all(["a", "b", "c", "d"].map((n) => startBackend(n)))));
    const echo = serve("ring", (cluster, route) => {
      cluster.lbPolicy = Cluster_LbPolicy.RING_HASH;
      // One ring entry per endpoint, so a removal changes nothing but the removed endpoint's entry.
      cluster.lbConfig = {
        case: "ringHashLbConfig",
        value: create(Cluster_RingHashLbConfigSchema, { minimumRingSize: 1n }),
      };
      const action = route.virtualHosts[0]?.routes[0]?.action;
      if (action?.case !== "route") throw new Error("route action expected");
      action.value.hashPolicy = [
        create(RouteAction_HashPolicySchema, { policySpecifier: { case: "header", value: { headerName: "x-user" } } }),
      ];
    });
    const users = Array.from({ length: 40 }, (_, i) => `user-${i}`);
    const first = await served(echo, 40, (i) => ({ "x-user": users[i] as string }));
    const again = await served(echo, 40, (i) => ({ "x-user": users[i] as string }));
    expect(again).toEqual(first);
    expect(new Set(first).size).toBeGreaterThan(1);
    // Remove backend "a" from EDS.
    const [removed, ...rest] = backends;
    server.setSnapshot([
      buildClusterLoadAssignment({
        clusterName: "ring-cluster",
        localities: [{ zone: "z1", endpoints: rest.map((b) => b.address) }],
      }),
    ]);
    let after = await served(echo, 40, (i) => ({ "x-user": users[i] as string }));
    for (let tries = 0; after.includes(removed?.name ?? "") && tries < 50; tries++) {
      await new Promise((r) => setTimeout(r, 20));
      after = await served(echo, 40, (i) => ({ "x-user": users[i] as string }));
    }
    first.forEach((owner, i) => {
      if (owner !== "a") expect(after[i]).toBe(owner);
      else expect(after[i]).not.toBe("a");
    });
  }, 60_000); // a few hundred calls: 12 s in npm test with the machine busy

  it("weighted_round_robin with enable_oob_load_report: weights from each backend's ORCA stream on its connection", async () => {
    // No per-call reports: each backend's ORCA service reports 100 qps and its application utilization.
    const oobBackend = (name: string, applicationUtilization: number) => {
      const recorder = createServerMetricRecorder();
      recorder.setQps(100);
      recorder.setApplicationUtilization(applicationUtilization);
      return startBackend(name, { routes: orcaServiceRoutes(recorder, { minReportIntervalMs: 20 }) });
    };
    backends.push(await oobBackend("a", 0.1), await oobBackend("b", 0.9));
    const echo = serve("wrroob", (cluster) => {
      wrrPolicy(cluster, {
        blackoutPeriod: seconds(0),
        weightUpdatePeriod: seconds(0.1),
        enableOobLoadReport: true,
        oobReportingPeriod: seconds(0.02),
      });
    });
    // Weights 1000 and 111: a gets 9 calls in 10 once they are in use (round robin, 1 in 2, before).
    const block = async () => (await served(echo, 20)).filter((n) => n === "a").length;
    for (let round = 0; round < 100 && (await block()) < 16; round++) await new Promise((r) => setTimeout(r, 20));
    expect(await block()).toBeGreaterThanOrEqual(16);
    // A51: the stream runs on the connection the calls use; one HTTP/2 connection per backend.
    expect(backends.map((b) => b.sessions)).toEqual([1, 1]);
  }, 60_000);

  // About 700 calls: 6-11 s at load average 30 on 2 cores, hence its own timeout.
  it("weighted_round_robin: traffic follows qps / application_utilization within 10 %", async () => {
    const utilization = { a: 0.2, b: 0.4, c: 0.8 };
    for (const [n, u] of Object.entries(utilization))
      backends.push(await startBackend(n, { interceptors: [orcaTrailer(u)] }));
    const echo = serve("wrr", (cluster) => {
      wrrPolicy(cluster, { blackoutPeriod: seconds(0), weightUpdatePeriod: seconds(0.1) });
    });
    // Weights are 500, 250 and 125: 4/7, 2/7, 1/7 of the calls once the weights are in use. Reports come with every
    // call; the scheduler picks them up at the next 100 ms weight update, so calls continue until it has.
    // Calls go in concurrent batches of 35, which a loaded machine serves much faster than one by one.
    const batches = async (count: number) => {
      const names: string[] = [];
      for (let i = 0; i < count; i++) {
        const batch = await Promise.all(Array.from({ length: 35 }, (_, j) => echo.unary({ value: `${i}.${j}` })));
        names.push(...batch.map((r) => r.value.split(":")[0] as string));
      }
      return names;
    };
    let names: string[] = [];
    for (let round = 0; round < 30; round++) {
      names = await batches(1);
      if (names.filter((n) => n === "a").length > 17) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    names = await batches(20);
    const share = (n: string) => names.filter((x) => x === n).length / names.length;
    expect(share("a")).toBeCloseTo(4 / 7, 1);
    expect(Math.abs(share("a") - 4 / 7)).toBeLessThan(0.1 * (4 / 7));
    expect(Math.abs(share("b") - 2 / 7)).toBeLessThan(0.1 * (2 / 7));
    expect(Math.abs(share("c") - 1 / 7)).toBeLessThan(0.1 * (1 / 7) + 0.02);
  }, 60_000);

  it("least_request: a backend with calls outstanding gets no more, where round robin would give it every third", async () => {
    // "held" never answers (until the end): its outstanding calls only grow. With choice_count 10, a pick lands on it
    // only if all ten samples do: (1/3)^10 per call. Round robin sends it one call in three whatever it holds.
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const arrivals: string[] = [];
    let arrived: () => void = () => {};
    const hold: Interceptor = (next) => async (req) => {
      const value = (req.message as unknown as { value: string }).value;
      if (value.startsWith("hold")) {
        arrivals.push(value);
        arrived();
        await gate;
      }
      return next(req);
    };
    backends.push(
      ...(await Promise.all([startBackend("a"), startBackend("b"), startBackend("held", { interceptors: [hold] })])),
    );
    const echo = serve("lr", (cluster) => {
      cluster.lbPolicy = Cluster_LbPolicy.LEAST_REQUEST;
      cluster.lbConfig = {
        case: "leastRequestLbConfig",
        value: create(Cluster_LeastRequestLbConfigSchema, { choiceCount: 10 }),
      };
    });
    // Every endpoint READY first (a pick among fewer would prove nothing): warm-up calls are answered by all three.
    for (let i = 0; i < 300 && !backends.every((b) => (b.calls.get("Unary") ?? 0) > 0); i++) await served(echo, 1);
    expect(backends.every((b) => (b.calls.get("Unary") ?? 0) > 0)).toBe(true);
    // One call at a time: each ends at a or b, or stays outstanding at "held".
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < 60; i++) {
      const reachedHeld = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      const call = echo.unary({ value: `hold-${i}` });
      pending.push(call);
      await Promise.race([call, reachedHeld]);
    }
    // At most the first pick (every endpoint at 0 outstanding) and a one-in-59,000 draw.
    expect(arrivals.length).toBeLessThanOrEqual(2);
    release();
    await Promise.all(pending);
  });

  it("outlier detection: a backend failing every call is ejected and gets no calls", async () => {
    backends.push(...(await Promise.all(["a", "b", "c", "d"].map((n) => startBackend(n)))));
    backends.push(await startBackend("bad", { interceptors: [failing] }));
    const echo = serve("od", (cluster) => {
      cluster.outlierDetection = create(OutlierDetectionSchema, {
        // Wide enough that a loaded machine still completes a few calls per backend in one interval.
        interval: seconds(0.5),
        baseEjectionTime: seconds(30),
        maxEjectionPercent: 50,
        enforcingSuccessRate: 0,
        failurePercentageThreshold: 50,
        enforcingFailurePercentage: 100,
        failurePercentageMinimumHosts: 2,
        failurePercentageRequestVolume: 2,
      });
    });
    const call = () =>
      echo.unary({ value: "x" }).then(
        (r) => r.value.split(":")[0] as string,
        () => "bad",
      );
    // Calls until one interval has seen the failures: then a block of 50 calls never reaches "bad".
    let block: string[] = [];
    for (let round = 0; round < 30; round++) {
      block = [];
      for (let i = 0; i < 50; i++) block.push(await call());
      if (!block.includes("bad")) break;
    }
    expect(block).not.toContain("bad");
    // It did get calls before the ejection.
    expect(failures.count).toBeGreaterThan(0);
  });

  it("circuit breaking: calls over max_requests in flight fail UNAVAILABLE until one ends", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let arrived = 0;
    const held: Interceptor = (next) => async (req) => {
      arrived++;
      await gate;
      return next(req);
    };
    backends.push(await startBackend("slow", { interceptors: [held] }));
    const echo = serve("cb", (cluster) => {
      cluster.lrsServer = create(ConfigSourceSchema, { configSourceSpecifier: { case: "self", value: {} } });
      cluster.circuitBreakers = create(CircuitBreakersSchema, {
        thresholds: [create(CircuitBreakers_ThresholdsSchema, { priority: RoutingPriority.DEFAULT, maxRequests: 2 })],
      });
    });
    const first = echo.unary({ value: "1" });
    const second = echo.unary({ value: "2" });
    // Wait until both are on the wire: the backend has seen them.
    for (let i = 0; i < 400 && arrived < 2; i++) await new Promise((r) => setTimeout(r, 5));
    expect(arrived).toBe(2);
    const third = await echo.unary({ value: "3" }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(third?.code).toBe(Code.Unavailable);
    expect(third?.message).toMatch(/circuit breaking/);
    release();
    await Promise.all([first, second]);
    expect((await echo.unary({ value: "4" })).value).toBe("slow:4");
    // The drop is in the cluster's load report, uncategorized.
    const drops = () =>
      server.lrs
        .reports()
        .flatMap((event) => event.loads.filter((load) => load.clusterName === "cb-cluster"))
        .reduce((sum, load) => sum + load.totalDropped, 0);
    await server.lrs.waitForReport(() => drops() >= 1, 15_000);
    const categorized = server.lrs
      .reports()
      .flatMap((event) => event.loads.filter((load) => load.clusterName === "cb-cluster"))
      .flatMap((load) => Object.keys(load.droppedByCategory));
    expect(drops()).toBe(1);
    expect(categorized).toEqual([]);
  });

  it("retries: a call failing UNAVAILABLE is retried on a new pick and succeeds elsewhere (A44)", async () => {
    const previousAttempts = new Set<string>();
    const recordAttempts: Interceptor = (next) => async (req) => {
      previousAttempts.add(req.header.get("grpc-previous-rpc-attempts") ?? "none");
      return next(req);
    };
    backends.push(
      await startBackend("bad", { interceptors: [failing], trailersOnly: true }),
      await startBackend("good", { interceptors: [recordAttempts] }),
    );
    const before = failures.count;
    const echo = serve("retry", (_cluster, route) => {
      routeAction(route).retryPolicy = create(RetryPolicySchema, {
        retryOn: "unavailable,resource-exhausted",
        numRetries: 2,
        retryBackOff: { baseInterval: seconds(0.001), maxInterval: seconds(0.002) },
      });
    });
    // Round robin alternates: every call that lands on "bad" is retried on "good".
    const names = await served(echo, 20);
    expect(names.every((n) => n === "good")).toBe(true);
    expect(failures.count - before).toBeGreaterThanOrEqual(5);
    // A6: the retry says how many attempts came before it.
    expect(previousAttempts.has("1")).toBe(true);
  });

  it("retries: a request larger than the retry buffer (A6, 256 KiB per call) is sent once, a small one retried", async () => {
    backends.push(await startBackend("bad", { interceptors: [failing], trailersOnly: true }));
    const echo = serve("retrybuffer", (_cluster, route) => {
      routeAction(route).retryPolicy = create(RetryPolicySchema, {
        retryOn: "unavailable",
        numRetries: 2,
        retryBackOff: { baseInterval: seconds(0.001), maxInterval: seconds(0.002) },
      });
    });
    const attempts = async (value: string) => {
      const before = failures.count;
      const error = await echo.unary({ value }).catch((e: unknown) => ConnectError.from(e));
      expect(error).toMatchObject({ code: Code.Unavailable });
      return failures.count - before;
    };
    expect(await attempts("x".repeat(1024))).toBe(3);
    expect(await attempts("x".repeat(256 * 1024 + 1))).toBe(1);
    // The big call's bytes were given back: a small call retries again.
    expect(await attempts("y")).toBe(3);
  });

  it("retries: without a retry policy the same failures reach the caller", async () => {
    backends.push(await startBackend("bad", { interceptors: [failing] }), await startBackend("good"));
    const echo = serve("noretry", () => {});
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        echo.unary({ value: `${i}` }).then(
          () => "ok",
          (e: unknown) => ConnectError.from(e).code,
        ),
      ),
    );
    expect(results).toContain(Code.Unavailable);
  });

  it("fault injection: always-abort fails calls with the configured status, a per-route disabled override turns it off", async () => {
    backends.push(await startBackend("a"));
    const filter = faultFilter({
      abort: create(FaultAbortSchema, {
        errorType: { case: "grpcStatus", value: Code.ResourceExhausted },
        percentage: ALL,
      }),
    });
    const echo = serve("abort", () => {}, [filter]);
    const error = await echo.unary({ value: "x" }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(error?.code).toBe(Code.ResourceExhausted);
    expect(error?.message).toMatch(/fault injected/);
    expect(backends[0]?.calls.get("Unary") ?? 0).toBe(0);
    await transport?.close();
    const off = serve(
      "abort-off",
      (_c, route) => {
        const r = route.virtualHosts[0]?.routes[0];
        if (r === undefined) throw new Error("route expected");
        r.typedPerFilterConfig["envoy.filters.http.fault"] = anyPack(
          FilterConfigSchema,
          create(FilterConfigSchema, { config: anyPack(HTTPFaultSchema, create(HTTPFaultSchema)), disabled: true }),
        );
      },
      [filter],
    );
    expect((await off.unary({ value: "y" })).value).toBe("a:y");
  });

  it("fault injection: an always-delay longer than the deadline fails DEADLINE_EXCEEDED before anything is sent", async () => {
    backends.push(await startBackend("a"));
    const filter = faultFilter({
      delay: create(FaultDelaySchema, {
        faultDelaySecifier: { case: "fixedDelay", value: seconds(20) },
        percentage: ALL,
      }),
    });
    const echo = serve("delay", () => {}, [filter]);
    const error = await echo.unary({ value: "x" }, { timeoutMs: 50 } as never).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(error?.code).toBe(Code.DeadlineExceeded);
    expect(backends[0]?.calls.get("Unary") ?? 0).toBe(0);
  });

  it("fault injection: max_active_faults lets a call through undelayed while another fault is active", async () => {
    backends.push(await startBackend("a"));
    const filter = faultFilter({
      delay: create(FaultDelaySchema, {
        faultDelaySecifier: { case: "fixedDelay", value: seconds(20) },
        percentage: ALL,
      }),
      maxActiveFaults: 1,
    });
    const echo = serve("maxfaults", () => {}, [filter]);
    const abort = new AbortController();
    const delayed = echo.unary({ value: "1" }, { signal: abort.signal } as never).then(
      () => "done",
      (e: unknown) => ConnectError.from(e).code,
    );
    // The second call is not delayed: it completes while the first still waits out its 20 s delay.
    expect((await echo.unary({ value: "2" })).value).toBe("a:2");
    abort.abort();
    expect(await delayed).toBe(Code.Canceled);
  });
});
