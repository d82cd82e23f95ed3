// ORCA to LRS end to end over real HTTP/2: a Connect backend reports per-call ORCA, the client's calls go through
// the load-reporting interceptor into the LRS client, and the control plane's sink receives the locality's load.
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import type { UpstreamLocalityStats } from "@xdskit/protos/envoy/config/endpoint/v3/load_report_pb";
import { ClientStatusDiscoveryService } from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  createLrsClient,
  loadReportingInterceptor,
  type OrcaPropagationConfig,
  orcaCallRecorder,
  orcaServerInterceptor,
  parseLrsReportEndpointMetrics,
} from "../src/index.js";
import { startBackend, type TestBackend } from "./support/backend.js";
import { createVirtualClock } from "./support/virtual-clock.js";
import { waitUntil } from "./support/wait.js";

describe("ORCA per call into LRS (scenarios 61 and 62)", () => {
  let controlPlane: ManagementServer;
  let backend: TestBackend;

  beforeAll(async () => {
    controlPlane = await createManagementServer({ lrsPolicy: { intervalMs: 1000 } });
    backend = await startBackend({
      interceptors: [orcaServerInterceptor()],
      handle(_request, context) {
        const recorder = orcaCallRecorder(context);
        recorder.recordCpuUtilization(0.6);
        recorder.recordMemoryUtilization(0.25);
        recorder.recordApplicationUtilization(0.5);
        recorder.recordNamedMetric("foo", 2);
        recorder.recordNamedMetric("bar", 3);
      },
    });
  });
  afterAll(async () => {
    await Promise.all([controlPlane.close(), backend.close()]);
  });

  /** Three calls through the bridge, one report; the locality's stats as the sink received them, and its loads. */
  async function run(nodeId: string, propagation: OrcaPropagationConfig | undefined, orcaLrsPropagation?: boolean) {
    const clock = createVirtualClock();
    const lrs = createLrsClient({
      node: { id: nodeId },
      clock,
      env: {},
      ...(orcaLrsPropagation === undefined ? {} : { orcaLrsPropagation }),
    });
    try {
      const stats = lrs.localityStats({
        server: { serverUri: controlPlane.address },
        clusterName: "echo",
        locality: { region: "eu", zone: "a" },
        ...(propagation === undefined ? {} : { propagation }),
      });
      const client = createClient(
        ClientStatusDiscoveryService,
        createGrpcTransport({ baseUrl: backend.url, interceptors: [loadReportingInterceptor({ stats })] }),
      );
      for (let i = 0; i < 3; i++) await client.fetchClientStatus({});
      await waitUntil(() => clock.pending().includes(1000), "the sink answered");
      const mark = controlPlane.lrs.mark();
      clock.advance(1000);
      const report = await controlPlane.lrs.waitForReport((r) => r.nodeId === nodeId, { after: mark });
      const latest = controlPlane.lrs.latestLoads({ nodeId });
      return Object.assign(report.clusterStats[0]?.upstreamLocalityStats[0] as UpstreamLocalityStats, { latest });
    } finally {
      await lrs.close();
    }
  }

  const named = (l: UpstreamLocalityStats) =>
    l.loadMetricStats.map((m) => [m.metricName, m.totalMetricValue, m.numRequestsFinishedWithMetric]);

  test("61: named_metrics {foo, bar} without lrs_report_endpoint_metrics: nothing propagated (A85)", async () => {
    const locality = await run("orca-61-a85", parseLrsReportEndpointMetrics([]));
    expect(locality.totalSuccessfulRequests).toBe(3n);
    expect(named(locality)).toEqual([]);
    expect([locality.cpuUtilization, locality.memUtilization, locality.applicationUtilization]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  test("61: the same with GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION off: foo and bar raw (A64)", async () => {
    const locality = await run("orca-61-a64", parseLrsReportEndpointMetrics([]), false);
    expect(named(locality)).toEqual([
      ["bar", 9, 3n],
      ["foo", 6, 3n],
    ]);
    expect(locality.cpuUtilization).toBeUndefined();
  });

  test("62: [cpu, mem, application, named_metrics.foo, unknown]: the three utilizations top-level, only foo named", async () => {
    const locality = await run(
      "orca-62",
      parseLrsReportEndpointMetrics([
        "cpu_utilization",
        "mem_utilization",
        "application_utilization",
        "named_metrics.foo",
        "unknown",
      ]),
    );
    expect(named(locality)).toEqual([["named_metrics.foo", 6, 3n]]);
    expect(locality.cpuUtilization?.totalMetricValue).toBeCloseTo(1.8, 12);
    expect(locality.cpuUtilization?.numRequestsFinishedWithMetric).toBe(3n);
    expect(locality.memUtilization).toMatchObject({ totalMetricValue: 0.75, numRequestsFinishedWithMetric: 3n });
    expect(locality.applicationUtilization).toMatchObject({ totalMetricValue: 1.5, numRequestsFinishedWithMetric: 3n });
    const [load] = locality.latest;
    expect(load?.localities[0]?.cpuUtilization?.mean).toBeCloseTo(0.6, 12);
    expect(load?.localities[0]?.metrics).toEqual({ "named_metrics.foo": { total: 6, count: 3, mean: 2 } });
  });
});
