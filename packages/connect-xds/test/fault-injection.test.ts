// A33's fault injection over real HTTP/2 where the configuration is not only the Listener's: faults whose values
// come from the call's headers (`header_abort`, `header_delay`, and the percentage headers), and overrides in a
// virtual host's `typed_per_filter_config` (a different fault for every route of the host) under a route's own
// (the fault disabled there).
import { create } from "@bufbuild/protobuf";
import { type Any, anyPack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { buildCluster, buildClusterLoadAssignment, buildListener, type ManagementServer } from "@xdskit/control-plane";
import { FilterConfigSchema } from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import { RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import {
  FaultDelay_HeaderDelaySchema,
  FaultDelaySchema,
} from "@xdskit/protos/envoy/extensions/filters/common/fault/v3/fault_pb";
import {
  FaultAbort_HeaderAbortSchema,
  FaultAbortSchema,
  HTTPFaultSchema,
} from "@xdskit/protos/envoy/extensions/filters/http/fault/v3/fault_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient, otherClient } from "./support/echo-client.js";
import { clientFor, simpleSnapshot, startControlPlane } from "./support/harness.js";
import { ALL, faultFilter } from "./support/policy-config.js";

const FAULT = "envoy.filters.http.fault";

/** The code a promise fails with, or "ok". */
const outcome = (call: Promise<unknown>) =>
  call.then(
    () => "ok",
    (error: unknown) => ConnectError.from(error).code,
  );

describe("fault injection over HTTP/2 (A33)", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let a: Backend;
  const transports: XdsTransport[] = [];

  beforeAll(async () => {
    server = await startControlPlane();
    client = clientFor(server);
    a = await startBackend("a");
  });
  afterAll(async () => {
    await Promise.all(transports.map((t) => t.close()));
    await client.close();
    await a.close();
    await server.close();
  });

  const transportFor = (name: string) => {
    const transport = createXdsTransport({ target: `xds:///${name}`, client });
    transports.push(transport);
    return transport;
  };

  it("takes the abort code, the delay and their percentages from the call's headers", async () => {
    const filter = faultFilter({
      abort: create(FaultAbortSchema, {
        errorType: { case: "headerAbort", value: create(FaultAbort_HeaderAbortSchema) },
        percentage: ALL,
      }),
      delay: create(FaultDelaySchema, {
        faultDelaySecifier: { case: "headerDelay", value: create(FaultDelay_HeaderDelaySchema) },
        percentage: ALL,
      }),
    });
    const resources = simpleSnapshot("fault-headers", "fault-cluster", [{ zone: "z", endpoints: [a.address] }]);
    resources[0] = buildListener({
      name: "fault-headers",
      routeConfigName: "fault-headers-route",
      httpFilters: [filter],
    });
    server.setResources(resources);
    const echo = echoClient(transportFor("fault-headers"));
    const call = (headers: Record<string, string>, timeoutMs?: number) =>
      outcome(echo.unary({ value: "x" }, { headers, ...(timeoutMs === undefined ? {} : { timeoutMs }) }));
    const before = a.calls.get("Unary") ?? 0;

    // Without the headers there is nothing to inject.
    expect(await call({})).toBe("ok");
    expect(await call({ "x-envoy-fault-abort-grpc-request": "5" })).toBe(Code.NotFound);
    expect(await call({ "x-envoy-fault-abort-grpc-request": "14" })).toBe(Code.Unavailable);
    // A percentage header of 0 turns the abort off (the lower of the header's and the configured percentage).
    expect(await call({ "x-envoy-fault-abort-grpc-request": "5", "x-envoy-fault-abort-request-percentage": "0" })).toBe(
      "ok",
    );
    // A 20 s delay from the header outlasts the call's 100 ms deadline; 0 % of it delays nothing.
    expect(await call({ "x-envoy-fault-delay-request": "20000" }, 100)).toBe(Code.DeadlineExceeded);
    expect(
      await call({ "x-envoy-fault-delay-request": "20000", "x-envoy-fault-delay-request-percentage": "0" }, 10_000),
    ).toBe("ok");
    // The aborted and the delayed calls never reached the backend.
    expect((a.calls.get("Unary") ?? 0) - before).toBe(3);
  });

  it("a virtual host's override replaces the Listener's fault, and a route's own override wins over it", async () => {
    const abort = (code: Code) =>
      create(HTTPFaultSchema, {
        abort: create(FaultAbortSchema, { errorType: { case: "grpcStatus", value: code }, percentage: ALL }),
      });
    const filter = faultFilter({ abort: abort(Code.Unauthenticated).abort! });
    const route = (service: string, typedPerFilterConfig: Record<string, Any> = {}) => ({
      match: { pathSpecifier: { case: "prefix" as const, value: `/xdskit.test.${service}/` } },
      action: {
        case: "route" as const,
        value: { clusterSpecifier: { case: "cluster" as const, value: "override-cluster" } },
      },
      typedPerFilterConfig,
    });
    // xds-client requires `config` in a FilterConfig even when it is disabled.
    const disabled = anyPack(
      FilterConfigSchema,
      create(FilterConfigSchema, { config: anyPack(HTTPFaultSchema, create(HTTPFaultSchema)), disabled: true }),
    );
    server.setResources([
      buildListener({ name: "vh-override", routeConfigName: "override-routes", httpFilters: [filter] }),
      buildListener({ name: "vh-plain", routeConfigName: "override-routes", httpFilters: [filter] }),
      create(RouteConfigurationSchema, {
        name: "override-routes",
        virtualHosts: [
          {
            name: "override",
            domains: ["vh-override"],
            typedPerFilterConfig: { [FAULT]: anyPack(HTTPFaultSchema, abort(Code.ResourceExhausted)) },
            routes: [route("Echo"), route("Other", { [FAULT]: disabled })],
          },
          { name: "plain", domains: ["*"], routes: [route("Echo"), route("Other")] },
        ],
      }),
      buildCluster({ name: "override-cluster" }),
      buildClusterLoadAssignment({
        clusterName: "override-cluster",
        localities: [{ zone: "z", endpoints: [a.address] }],
      }),
    ]);
    const overridden = transportFor("vh-override");
    const plain = transportFor("vh-plain");
    expect(await outcome(echoClient(overridden).unary({ value: "x" }))).toBe(Code.ResourceExhausted);
    expect(await outcome(otherClient(overridden).call({ value: "x" }))).toBe("ok");
    expect(await outcome(echoClient(plain).unary({ value: "x" }))).toBe(Code.Unauthenticated);
    expect(await outcome(otherClient(plain).call({ value: "x" }))).toBe(Code.Unauthenticated);
  });
});
