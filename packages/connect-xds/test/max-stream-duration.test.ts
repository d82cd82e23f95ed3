// A31's timeouts over real HTTP/2: the route's `max_stream_duration.grpc_timeout_header_max`, when set, replaces its
// `max_stream_duration` (0 meaning no limit); without a route value the Listener's
// `common_http_options.max_stream_duration` applies; the caller's own deadline is never exceeded. The backend records
// the grpc-timeout header each call carries: the effective deadline, so no assertion depends on time passing (the
// one call that is left to hit its 50 ms deadline fails DEADLINE_EXCEEDED whatever the machine's load).
import { clone, create } from "@bufbuild/protobuf";
import { anyPack, anyUnpack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { ManagementServer } from "@xdskit/control-plane";
import { HttpProtocolOptionsSchema } from "@xdskit/protos/envoy/config/core/v3/protocol_pb";
import type { Listener } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import {
  HeaderMatcherSchema,
  RouteAction_MaxStreamDurationSchema,
  RouteSchema,
} from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import type { RouteConfiguration } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import { HttpConnectionManagerSchema } from "@xdskit/protos/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { type Echo, echoClient } from "./support/echo-client.js";
import { clientFor, simpleSnapshot, startControlPlane } from "./support/harness.js";
import { routeAction, seconds } from "./support/policy-config.js";

/** A grpc-timeout value in milliseconds. */
function timeoutMs(value: string | null): number | undefined {
  if (value === null) return undefined;
  const unit = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000_001 }[value.slice(-1)] ?? Number.NaN;
  return Number(value.slice(0, -1)) * unit;
}

describe("max_stream_duration and grpc_timeout_header_max (A31)", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let backend: Backend;
  let next = 0;
  const transports: XdsTransport[] = [];
  /** The grpc-timeout of each call, by request value. */
  const sent = new Map<string, string | null>();
  const record: Interceptor = (next) => (req) => {
    sent.set((req.message as unknown as { value: string }).value, req.header.get("grpc-timeout"));
    return next(req);
  };

  beforeAll(async () => {
    server = await startControlPlane();
    client = clientFor(server);
    backend = await startBackend("a", { interceptors: [record] });
  });
  afterAll(async () => {
    await Promise.all(transports.map((t) => t.close()));
    await client.close();
    await backend.close();
    await server.close();
  });

  /**
   * A transport whose route has `route` (max_stream_duration and grpc_timeout_header_max in seconds) and whose
   * Listener has `listener` (common_http_options.max_stream_duration in seconds). A first route, for calls with
   * `x-case: warm` and without a limit (max_stream_duration 0), lets the first call wait for the configuration and
   * the connection: the calls of the test find both ready.
   */
  async function echoWith(route: { msd?: number; headerMax?: number }, listener?: number): Promise<Echo> {
    const name = `msd-${next++}`;
    const resources = simpleSnapshot(name, `${name}-cluster`, [{ zone: "z", endpoints: [backend.address] }]);
    const routes = resources[1] as RouteConfiguration;
    const limited = routeAction(routes);
    if (route.msd !== undefined || route.headerMax !== undefined) {
      limited.maxStreamDuration = create(RouteAction_MaxStreamDurationSchema, {
        ...(route.msd === undefined ? {} : { maxStreamDuration: seconds(route.msd) }),
        ...(route.headerMax === undefined ? {} : { grpcTimeoutHeaderMax: seconds(route.headerMax) }),
      });
    }
    const routeOf = routes.virtualHosts[0]!.routes[0]!;
    const warm = clone(RouteSchema, routeOf);
    warm.match!.headers = [
      create(HeaderMatcherSchema, {
        name: "x-case",
        headerMatchSpecifier: { case: "stringMatch", value: { matchPattern: { case: "exact", value: "warm" } } },
      }),
    ];
    if (warm.action.case === "route") {
      warm.action.value.maxStreamDuration = create(RouteAction_MaxStreamDurationSchema, {
        maxStreamDuration: seconds(0),
      });
    }
    routes.virtualHosts[0]!.routes.unshift(warm);
    if (listener !== undefined) {
      const api = (resources[0] as Listener).apiListener!;
      const hcm = anyUnpack(api.apiListener!, HttpConnectionManagerSchema)!;
      hcm.commonHttpProtocolOptions = create(HttpProtocolOptionsSchema, { maxStreamDuration: seconds(listener) });
      api.apiListener = anyPack(HttpConnectionManagerSchema, hcm);
    }
    server.setResources(resources);
    const transport = createXdsTransport({ target: `xds:///${name}`, client });
    transports.push(transport);
    const echo = echoClient(transport);
    await echo.unary({ value: `${name}-warm` }, { timeoutMs: 10_000, headers: { "x-case": "warm" } });
    expect(sent.get(`${name}-warm`)).toMatch(/^\d+[mS]$/);
    return echo;
  }

  /** The deadline a call of `value` carried (undefined: none). */
  async function deadlineOf(echo: Echo, value: string, timeout?: number): Promise<number | undefined> {
    await echo.unary({ value }, timeout === undefined ? {} : { timeoutMs: timeout });
    return timeoutMs(sent.get(value) ?? null);
  }

  it("grpc_timeout_header_max replaces max_stream_duration: 50 ms instead of 60 s", async () => {
    const echo = await echoWith({ msd: 60, headerMax: 0.05 });
    expect(await deadlineOf(echo, "header-max")).toBeLessThanOrEqual(50);
    const error = await echo.unary({ value: "hang" }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(error?.code).toBe(Code.DeadlineExceeded);
  });

  it("grpc_timeout_header_max 0 means no limit, whatever max_stream_duration says", async () => {
    const echo = await echoWith({ msd: 0.05, headerMax: 0 });
    expect(await deadlineOf(echo, "header-zero")).toBeUndefined();
  });

  it("max_stream_duration alone limits the call; without it the Listener's common_http_options does", async () => {
    expect(await deadlineOf(await echoWith({ msd: 0.05 }), "route-msd")).toBeLessThanOrEqual(50);
    expect(await deadlineOf(await echoWith({}, 0.05), "listener-msd")).toBeLessThanOrEqual(50);
    // A route value of its own, 0, takes precedence over the Listener's: no limit.
    expect(await deadlineOf(await echoWith({ msd: 0 }, 0.05), "route-zero")).toBeUndefined();
  });

  it("the caller's shorter deadline is kept", async () => {
    const echo = await echoWith({ msd: 60, headerMax: 30 });
    expect(await deadlineOf(echo, "caller", 5_000)).toBeLessThanOrEqual(5_000);
    expect(await deadlineOf(echo, "caller-long", 50_000)).toBeLessThanOrEqual(30_000);
  });

  it("runs from the call's routing: the wait for the first configuration does not count", async () => {
    // The clock jumps 100 s while the call waits for its configuration (performance.now, which the call path reads,
    // offset; timers are not). Counted from the call's start, its route's 60 s would be long over.
    const realNow = performance.now.bind(performance);
    let offset = 0;
    const clock = vi.spyOn(performance, "now").mockImplementation(() => realNow() + offset);
    try {
      const name = `msd-${next++}`;
      const transport = createXdsTransport({ target: `xds:///${name}`, client });
      transports.push(transport);
      const call = echoClient(transport).unary({ value: "late" });
      await new Promise((resolve) => setImmediate(resolve));
      offset += 100_000;
      const resources = simpleSnapshot(name, `${name}-cluster`, [{ zone: "z", endpoints: [backend.address] }]);
      routeAction(resources[1] as RouteConfiguration).maxStreamDuration = create(RouteAction_MaxStreamDurationSchema, {
        maxStreamDuration: seconds(60),
      });
      server.setResources(resources);
      expect(await call).toMatchObject({ value: "a:late" });
      expect(timeoutMs(sent.get("late") ?? null)).toBeLessThanOrEqual(60_000);
    } finally {
      clock.mockRestore();
    }
  });
});
