// Load reporting without user code (A64, A85): a cluster with `lrs_server: self` and `lrs_report_endpoint_metrics`;
// backends report ORCA per call through @xdskit/orca-lrs-bridge's interceptor; the control plane's LRS sink must see
// every call on the locality that served it, with the selected metrics, and EDS drops by category. Real HTTP/2 and a
// real LRS stream; waits end on reports, not on time.
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  type ClusterLoad,
  createManagementServer,
  type ManagementServer,
} from "@xdskit/control-plane";
import { createServerMetricRecorder, orcaServerInterceptor } from "@xdskit/orca-lrs-bridge";
import { ClusterLoadAssignment_PolicySchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import { RetryPolicySchema } from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import type { RouteConfiguration } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import { FractionalPercent_DenominatorType } from "@xdskit/protos/envoy/type/v3/percent_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient, served } from "./support/echo-client.js";
import { clientFor, NODE_ID, simpleSnapshot } from "./support/harness.js";
import { GRPC_HEADERS, startHttp2Backend } from "./support/hostile-backends.js";

/** Sums the figures of every report of `cluster` (each report is a delta). */
function totals(loads: readonly ClusterLoad[]) {
  const byZone = new Map<
    string,
    {
      issued: number;
      succeeded: number;
      errors: number;
      cpu: number;
      cpuCount: number;
      foo: number;
      fooCount: number;
      bar: number;
    }
  >();
  let dropped = 0;
  const droppedByCategory: Record<string, number> = {};
  for (const load of loads) {
    dropped += load.totalDropped;
    for (const [category, count] of Object.entries(load.droppedByCategory)) {
      droppedByCategory[category] = (droppedByCategory[category] ?? 0) + count;
    }
    for (const locality of load.localities) {
      const zone = byZone.get(locality.zone) ?? {
        issued: 0,
        succeeded: 0,
        errors: 0,
        cpu: 0,
        cpuCount: 0,
        foo: 0,
        fooCount: 0,
        bar: 0,
      };
      zone.issued += locality.issued;
      zone.succeeded += locality.succeeded;
      zone.errors += locality.errors;
      zone.cpu += locality.cpuUtilization?.total ?? 0;
      zone.cpuCount += locality.cpuUtilization?.count ?? 0;
      zone.foo += locality.metrics["named_metrics.foo"]?.total ?? 0;
      zone.fooCount += locality.metrics["named_metrics.foo"]?.count ?? 0;
      zone.bar += locality.metrics["named_metrics.bar"]?.count ?? 0;
      byZone.set(locality.zone, zone);
    }
  }
  return { byZone, dropped, droppedByCategory };
}

describe("load reporting", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let a: Backend;
  let b: Backend;
  let transport: XdsTransport;
  let dropping: XdsTransport;

  beforeAll(async () => {
    server = await createManagementServer({ lrsPolicy: { clusters: "all", intervalMs: 1000 } });
    const recorder = createServerMetricRecorder();
    recorder.setCpuUtilization(0.5);
    recorder.setNamedMetric("foo", 2);
    recorder.setNamedMetric("bar", 7);
    a = await startBackend("a", { interceptors: [orcaServerInterceptor({ serverRecorder: recorder })] });
    b = await startBackend("b");
    const cluster = buildCluster({ name: "lrs-cluster", lrsServerSelf: true });
    cluster.lrsReportEndpointMetrics = ["cpu_utilization", "named_metrics.foo"];
    const dropAssignment = buildClusterLoadAssignment({
      clusterName: "drop-cluster",
      localities: [{ zone: "z1", endpoints: [b.address] }],
    });
    dropAssignment.policy = create(ClusterLoadAssignment_PolicySchema, {
      dropOverloads: [
        {
          category: "throttle",
          dropPercentage: { numerator: 100, denominator: FractionalPercent_DenominatorType.HUNDRED },
        },
      ],
    });
    server.setSnapshot([
      buildListener({ name: "lrs", routeConfigName: "lrs-route" }),
      buildRouteConfiguration({ name: "lrs-route", cluster: "lrs-cluster" }),
      cluster,
      buildClusterLoadAssignment({
        clusterName: "lrs-cluster",
        localities: [
          { zone: "z1", endpoints: [a.address] },
          { zone: "z2", endpoints: [b.address] },
        ],
      }),
      buildListener({ name: "drop", routeConfigName: "drop-route" }),
      buildRouteConfiguration({ name: "drop-route", cluster: "drop-cluster" }),
      buildCluster({ name: "drop-cluster", lrsServerSelf: true }),
      dropAssignment,
    ]);
    client = clientFor(server);
    transport = createXdsTransport({ target: "xds:///lrs", client });
    dropping = createXdsTransport({ target: "xds:///drop", client });
  });

  afterAll(async () => {
    await transport.close();
    await dropping.close();
    await client.close();
    await Promise.all([a.close(), b.close()]);
    await server.close();
  });

  it("counts every call on the locality that served it, with the ORCA metrics the cluster selects", async () => {
    const echo = echoClient(transport);
    const servedBy = { a: 0, b: 0 };
    for (let i = 0; i < 20; i++) servedBy[(await served(echo)) as "a" | "b"]++;
    expect(servedBy.a).toBeGreaterThan(0);
    expect(servedBy.b).toBeGreaterThan(0);
    const clusterLoads = () =>
      server.lrs
        .reports()
        .flatMap((event) =>
          event.loads.filter((load) => load.clusterName === "lrs-cluster" && load.nodeId === NODE_ID),
        );
    await server.lrs.waitForReport(() => {
      const { byZone } = totals(clusterLoads());
      // Every call finished: a report may carry a call's start and the next one its end.
      return (byZone.get("z1")?.succeeded ?? 0) + (byZone.get("z2")?.succeeded ?? 0) >= 20;
    }, 15_000);
    const { byZone } = totals(clusterLoads());
    expect(byZone.get("z1")).toEqual({
      issued: servedBy.a,
      succeeded: servedBy.a,
      errors: 0,
      cpu: 0.5 * servedBy.a,
      cpuCount: servedBy.a,
      foo: 2 * servedBy.a,
      fooCount: servedBy.a,
      // Not selected by lrs_report_endpoint_metrics: never reported.
      bar: 0,
    });
    expect(byZone.get("z2")).toMatchObject({ issued: servedBy.b, succeeded: servedBy.b, cpuCount: 0, fooCount: 0 });
  });

  it("fails calls dropped by an EDS drop category UNAVAILABLE and reports them under that category", async () => {
    const echo = echoClient(dropping);
    const before = b.calls.get("Unary") ?? 0;
    for (let i = 0; i < 5; i++) {
      const error = await served(echo).catch((e) => e);
      expect(error.code).toBe(Code.Unavailable);
      expect(error.rawMessage).toContain('category "throttle"');
    }
    const dropLoads = () =>
      server.lrs.reports().flatMap((event) => event.loads.filter((load) => load.clusterName === "drop-cluster"));
    await server.lrs.waitForReport(() => totals(dropLoads()).dropped >= 5, 15_000);
    expect(totals(dropLoads())).toMatchObject({ dropped: 5, droppedByCategory: { throttle: 5 } });
    expect(b.calls.get("Unary") ?? 0).toBe(before);
  });

  /** The loads of `cluster` reported by our node, every report so far. */
  const loadsOf = (cluster: string) => () =>
    server.lrs
      .reports()
      .flatMap((event) => event.loads.filter((load) => load.clusterName === cluster && load.nodeId === NODE_ID));

  it("counts every attempt of a retried call on the locality of its own pick", async () => {
    // "bad" answers every call with a Trailers-Only UNAVAILABLE (no response headers first: A6 retries it).
    let failed = 0;
    const bad = await startHttp2Backend((stream) => {
      failed++;
      stream.respond({ ...GRPC_HEADERS, "grpc-status": "14", "grpc-message": "broken" }, { endStream: true });
    });
    const goodBackend = await startBackend("good");
    const goodCalls = () => goodBackend.calls.get("Unary") ?? 0;
    const resources = simpleSnapshot("lrs-retry", "lrs-retry-cluster", [
      { zone: "z-bad", endpoints: [bad.address] },
      { zone: "z-good", endpoints: [goodBackend.address] },
    ]);
    resources[2] = buildCluster({ name: "lrs-retry-cluster", lrsServerSelf: true });
    const action = (resources[1] as RouteConfiguration).virtualHosts[0]?.routes[0]?.action;
    if (action?.case !== "route") throw new Error("route action expected");
    action.value.retryPolicy = create(RetryPolicySchema, {
      retryOn: "unavailable",
      numRetries: 4,
      retryBackOff: { baseInterval: { nanos: 1_000_000 }, maxInterval: { nanos: 2_000_000 } },
    });
    server.setResources(resources);
    const retrying = createXdsTransport({ target: "xds:///lrs-retry", client });
    try {
      const echo = echoClient(retrying);
      // Each attempt picks a locality at random: a call may fail on "bad" several times before "good" (or fail).
      for (let i = 0; i < 20; i++) await served(echo).catch(() => "failed");
      const good = goodCalls();
      // Retries happened: more attempts than calls.
      expect(failed + good).toBeGreaterThan(20);
      await server.lrs.waitForReport(() => {
        const zones = totals(loadsOf("lrs-retry-cluster")()).byZone;
        return (zones.get("z-good")?.succeeded ?? 0) >= good && (zones.get("z-bad")?.errors ?? 0) >= failed;
      }, 15_000);
      const { byZone } = totals(loadsOf("lrs-retry-cluster")());
      expect(byZone.get("z-bad")).toMatchObject({ issued: failed, succeeded: 0, errors: failed });
      expect(byZone.get("z-good")).toMatchObject({ issued: good, succeeded: good, errors: 0 });
    } finally {
      await retrying.close();
      await Promise.all([bad.close(), goodBackend.close()]);
    }
  });

  it("loadReporting: false counts nothing, on a cluster another transport of the client reports", async () => {
    const resources = simpleSnapshot("lrs-quiet", "lrs-quiet-cluster", [{ zone: "z1", endpoints: [b.address] }]);
    resources[2] = buildCluster({ name: "lrs-quiet-cluster", lrsServerSelf: true });
    server.setResources(resources);
    const quiet = createXdsTransport({ target: "xds:///lrs-quiet", client, loadReporting: false });
    const counted = createXdsTransport({ target: "xds:///lrs-quiet", client });
    try {
      for (let i = 0; i < 5; i++) expect(await served(echoClient(quiet))).toBe("b");
      for (let i = 0; i < 3; i++) expect(await served(echoClient(counted))).toBe("b");
      // The quiet calls ended first: had they been counted, the report that holds the last counted call would
      // hold them too.
      await server.lrs.waitForReport(
        () => (totals(loadsOf("lrs-quiet-cluster")()).byZone.get("z1")?.succeeded ?? 0) >= 3,
        15_000,
      );
      expect(totals(loadsOf("lrs-quiet-cluster")()).byZone.get("z1")).toMatchObject({ issued: 3, succeeded: 3 });
    } finally {
      await Promise.all([quiet.close(), counted.close()]);
    }
  });
});
