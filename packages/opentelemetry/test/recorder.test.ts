// The recorder between a real @xdskit/xds-client and the OpenTelemetry SDK (in-memory exporter), against a real
// control plane on 127.0.0.1. Steps:
//  1. The client watches a valid listener and one it must reject: the SDK then holds one valid and one invalid
//     update, connected = 1, and the two cached resources by cache state, with A78's labels, units and types.
//  2. The control plane stops: the failed reconnection counts one server failure and connected drops to 0.
//  3. The client closes: its gauges are no longer reported.
import { create } from "@bufbuild/protobuf";
import { type Attributes, ValueType } from "@opentelemetry/api";
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { buildListener, createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { ListenerSchema } from "@xdskit/protos/envoy/config/listener/v3/listener_pb";
import { createXdsClient, listenerResourceType, type XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createOpenTelemetryRecorder } from "../src/index.js";

const TARGET = "xds:///echo.test";

describe("OpenTelemetry recorder with a real client and control plane", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let provider: MeterProvider;
  // Cumulative, as most backends take it; the delta reader shows which gauges were observed in one collection.
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const deltaExporter = new InMemoryMetricExporter(AggregationTemporality.DELTA);
  const deltaReader = new PeriodicExportingMetricReader({ exporter: deltaExporter, exportIntervalMillis: 3_600_000 });

  /** Every metric of the latest collection, by name. */
  async function collect(delta = false): Promise<Map<string, MetricData>> {
    const [from, by] = delta ? [deltaExporter, deltaReader] : [exporter, reader];
    from.reset();
    await by.forceFlush();
    const metrics = from.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
    return new Map(metrics.map((m) => [m.descriptor.name, m]));
  }

  function points(metric: MetricData | undefined): { labels: Attributes; value: unknown }[] {
    return (metric?.dataPoints ?? []).map((p) => ({ labels: p.attributes, value: p.value }));
  }

  async function until(check: (metrics: Map<string, MetricData>) => boolean): Promise<Map<string, MetricData>> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const metrics = await collect();
      if (check(metrics) || Date.now() > deadline) return metrics;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  beforeAll(async () => {
    server = await createManagementServer();
    server.setResources([
      buildListener({ name: "echo.test", routeConfigName: "echo-route" }),
      create(ListenerSchema, { name: "bad" }),
    ]);
    provider = new MeterProvider({ readers: [reader, deltaReader] });
    client = createXdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }] }],
        node: { id: "n" },
      },
      target: TARGET,
      metrics: createOpenTelemetryRecorder({ meterProvider: provider }),
    });
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
    await provider?.shutdown();
  });

  const server_ = () => ({ "grpc.target": TARGET, "grpc.xds.server": server.address });

  test("counts valid and invalid updates and reports connected and the cache, with A78 labels and units", async () => {
    const results = await Promise.all(
      ["echo.test", "bad"].map(
        (name) =>
          new Promise<boolean>((resolve) => {
            client.watch(listenerResourceType, name, {
              onResourceChanged: (result) => resolve(result.ok),
              onAmbientError: () => resolve(false),
            });
          }),
      ),
    );
    expect(results).toEqual([true, false]);

    const metrics = await collect();
    // A78 spells the type without the type URL's prefix.
    const LISTENER = "envoy.config.listener.v3.Listener";
    const byType = { ...server_(), "grpc.xds.resource_type": LISTENER };
    expect(points(metrics.get("grpc.xds_client.resource_updates_valid"))).toEqual([{ labels: byType, value: 1 }]);
    expect(points(metrics.get("grpc.xds_client.resource_updates_invalid"))).toEqual([{ labels: byType, value: 1 }]);
    expect(points(metrics.get("grpc.xds_client.server_failure"))).toEqual([]);
    expect(points(metrics.get("grpc.xds_client.connected"))).toEqual([{ labels: server_(), value: 1 }]);
    const cache = (state: string) => ({
      "grpc.target": TARGET,
      "grpc.xds.authority": "#old",
      "grpc.xds.resource_type": LISTENER,
      "grpc.xds.cache_state": state,
    });
    expect(points(metrics.get("grpc.xds_client.resources"))).toEqual(
      expect.arrayContaining([
        { labels: cache("acked"), value: 1 },
        { labels: cache("nacked"), value: 1 },
      ]),
    );
    expect(points(metrics.get("grpc.xds_client.resources"))).toHaveLength(2);

    const shape = (name: string) => {
      const metric = metrics.get(name);
      return [metric?.descriptor.unit, metric?.descriptor.valueType, metric?.dataPointType];
    };
    expect(shape("grpc.xds_client.resource_updates_valid")).toEqual(["{resource}", ValueType.INT, DataPointType.SUM]);
    expect(shape("grpc.xds_client.resource_updates_invalid")).toEqual(["{resource}", ValueType.INT, DataPointType.SUM]);
    expect(shape("grpc.xds_client.connected")).toEqual(["{bool}", ValueType.INT, DataPointType.GAUGE]);
    expect(shape("grpc.xds_client.resources")).toEqual(["{resource}", ValueType.INT, DataPointType.GAUGE]);
    expect(metrics.get("grpc.xds_client.connected")?.descriptor.description).toMatch(/^EXPERIMENTAL\. /);
  });

  test("a failed reconnection counts one server failure and connected drops to 0", async () => {
    await server.stop();
    const metrics = await until((m) => points(m.get("grpc.xds_client.server_failure")).length > 0);
    expect(points(metrics.get("grpc.xds_client.server_failure"))).toEqual([{ labels: server_(), value: 1 }]);
    expect(points(metrics.get("grpc.xds_client.connected"))).toEqual([{ labels: server_(), value: 0 }]);
    const failures = metrics.get("grpc.xds_client.server_failure");
    expect([failures?.descriptor.unit, failures?.descriptor.valueType, failures?.dataPointType]).toEqual([
      "{failure}",
      ValueType.INT,
      DataPointType.SUM,
    ]);
  });

  test("a closed client's gauges are no longer observed", async () => {
    const open = await collect(true);
    expect(points(open.get("grpc.xds_client.connected"))).toEqual([{ labels: server_(), value: 0 }]);
    expect(points(open.get("grpc.xds_client.resources"))).toHaveLength(2);
    await client.close();
    const closed = await collect(true);
    expect(points(closed.get("grpc.xds_client.connected"))).toEqual([]);
    expect(points(closed.get("grpc.xds_client.resources"))).toEqual([]);
    // Counters keep their cumulative totals.
    const totals = await collect();
    expect(points(totals.get("grpc.xds_client.server_failure"))).toEqual([{ labels: server_(), value: 1 }]);
  });
});
