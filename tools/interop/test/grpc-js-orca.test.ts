// @grpc/grpc-js's own ORCA support (nobody here wrote it) read by @xdskit/orca-lrs-bridge over 127.0.0.1:
//  1. Per-call reports a grpc-js backend records with `getMetricsRecorder()` reach our Connect interceptor and
//     our grpc-js interceptor, value for value; counted into a load store they give A85's figures.
//  2. Out of band: our OOB client streams grpc-js's `ServerMetricRecorder` reports (its OpenRcaService), one call
//     for two listeners; a backend without that service answers UNIMPLEMENTED and the client stops asking.
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import {
  createLoadStore,
  createOrcaOobClient,
  loadReportingInterceptor,
  orcaClientInterceptor,
  parseLrsReportEndpointMetrics,
} from "@xdskit/orca-lrs-bridge";
import { orcaGrpcJsInterceptor } from "@xdskit/orca-lrs-bridge/grpc-js";
import { ClientStatusDiscoveryService } from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import { type OrcaLoadReport, OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { callEcho, type EchoBackend, startEchoBackend } from "../src/echo-backend.js";
import { type OrcaBackend, startOrcaBackend } from "../src/orca-backend.js";

async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** What the grpc-js backend records for its n-th call. */
const expected = (n: number) =>
  create(OrcaLoadReportSchema, {
    cpuUtilization: 0.25 + 0.01 * n,
    memUtilization: 0.5,
    namedMetrics: { queue: 2, calls: n },
  });

describe("grpc-js ORCA backends read by the bridge", () => {
  let backend: OrcaBackend;
  let plain: EchoBackend;

  beforeAll(async () => {
    [backend, plain] = await Promise.all([startOrcaBackend("orca"), startEchoBackend("plain")]);
  });
  afterAll(async () => {
    await Promise.all([backend?.close(), plain?.close()]);
  });

  test("per-call reports through our Connect interceptors, into A85 load figures", async () => {
    const store = createLoadStore({ env: {} });
    const server = { serverUri: "lrs.test:1" };
    const stats = store.localityStats({
      server,
      clusterName: "orca",
      locality: { zone: "a" },
      propagation: parseLrsReportEndpointMetrics(["cpu_utilization", "mem_utilization", "named_metrics.queue"]),
    });
    const reports: OrcaLoadReport[] = [];
    const client = createClient(
      ClientStatusDiscoveryService,
      createGrpcTransport({
        baseUrl: `http://${backend.address}`,
        interceptors: [
          orcaClientInterceptor({ onReport: (r) => reports.push(r) }),
          loadReportingInterceptor({ stats }),
        ],
      }),
    );
    const first = backend.calls + 1;
    for (let i = 0; i < 3; i++) await client.fetchClientStatus({});
    expect(reports).toEqual([expected(first), expected(first + 1), expected(first + 2)]);

    const [locality] =
      store.takeReport(server, { sendAllClusters: true, clusters: new Set() }).clusterStats[0]?.upstreamLocalityStats ??
      [];
    expect(locality?.totalSuccessfulRequests).toBe(3n);
    expect(locality?.cpuUtilization?.numRequestsFinishedWithMetric).toBe(3n);
    expect(locality?.cpuUtilization?.totalMetricValue).toBeCloseTo(0.75 + 0.01 * (3 * first + 3), 12);
    expect(locality?.memUtilization).toMatchObject({ totalMetricValue: 1.5, numRequestsFinishedWithMetric: 3n });
    expect(
      locality?.loadMetricStats.map((m) => [m.metricName, m.totalMetricValue, m.numRequestsFinishedWithMetric]),
    ).toEqual([["named_metrics.queue", 6, 3n]]);
  });

  test("per-call reports through our grpc-js interceptor", async () => {
    const reports: OrcaLoadReport[] = [];
    const client = new grpc.Client(backend.address, grpc.credentials.createInsecure(), {
      interceptors: [orcaGrpcJsInterceptor({ onReport: (r) => reports.push(r) })],
    });
    try {
      const first = backend.calls + 1;
      expect(await callEcho(client, "x")).toEqual({ ok: true, reply: "orca:x" });
      expect(await callEcho(client, "y")).toEqual({ ok: true, reply: "orca:y" });
      expect(reports).toEqual([expected(first), expected(first + 1)]);
    } finally {
      client.close();
    }
  });

  test("out of band: grpc-js's ServerMetricRecorder streams to our OOB client, one call for two listeners", async () => {
    backend.serverRecorder.setCpuUtilizationMetric(0.7);
    backend.serverRecorder.putUtilizationMetric("gpu", 0.3);
    backend.serverRecorder.setQpsMetric(12);
    const oob = createOrcaOobClient({ transport: createGrpcTransport({ baseUrl: `http://${backend.address}` }) });
    try {
      const a: OrcaLoadReport[] = [];
      const b: OrcaLoadReport[] = [];
      oob.subscribe({ intervalMs: 500, onReport: (r) => a.push(r) });
      oob.subscribe({ intervalMs: 100, onReport: (r) => b.push(r) });
      expect(oob.requestedIntervalMs).toBe(100);
      await until(() => b.length >= 2, "two reports");
      expect(a.length).toBe(b.length);
      expect(b[0]).toEqual(
        create(OrcaLoadReportSchema, { cpuUtilization: 0.7, rpsFractional: 12, utilization: { gpu: 0.3 } }),
      );
      expect(oob.state).toBe("streaming");
    } finally {
      oob.close();
    }
  });

  test("a grpc-js backend without the ORCA service: UNIMPLEMENTED, not retried", async () => {
    const errors: string[] = [];
    const oob = createOrcaOobClient({
      transport: createGrpcTransport({ baseUrl: `http://127.0.0.1:${plain.port}` }),
      logger: { error: (m) => errors.push(m), warn: () => {}, info: () => {}, debug: () => {} },
    });
    try {
      oob.subscribe({ intervalMs: 100, onReport: () => {} });
      await until(() => oob.state === "unimplemented", "the client gives up");
      expect(errors).toHaveLength(1);
    } finally {
      oob.close();
    }
  });
});
