// The A66 per-call instruments @xdskit/connect-xds records: names, units, A66's bucket boundaries and labels reach
// the SDK as given.
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { describe, expect, test } from "vitest";
import { createOpenTelemetryRecorder, LATENCY_BUCKETS, SIZE_BUCKETS } from "../src/index.js";

describe("A66 call instruments", () => {
  test("the attempt counter and the four histograms, with A66's units and buckets", async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({ readers: [reader] });
    const recorder = createOpenTelemetryRecorder({ meterProvider: provider });
    const labels = { "grpc.method": "pkg.S/M", "grpc.target": "xds:///s", "grpc.status": "OK" };
    recorder.addCounter("grpc.client.attempt.started", 1, { "grpc.method": "pkg.S/M", "grpc.target": "xds:///s" });
    recorder.recordHistogram("grpc.client.attempt.duration", 0.002, { ...labels, "grpc.lb.locality": "{zone}" });
    recorder.recordHistogram("grpc.client.attempt.sent_total_compressed_message_size", 3000, labels);
    recorder.recordHistogram("grpc.client.attempt.rcvd_total_compressed_message_size", 5, labels);
    recorder.recordHistogram("grpc.client.call.duration", 0.004, labels);
    await reader.forceFlush();
    const scopes = exporter.getMetrics().flatMap((r) => r.scopeMetrics);
    // The per-call instruments are connect-xds's, not the client's.
    expect(scopes.map((s) => [s.scope.name, s.metrics.map((m) => m.descriptor.name).sort()])).toEqual([
      [
        "@xdskit/connect-xds",
        [
          "grpc.client.attempt.duration",
          "grpc.client.attempt.rcvd_total_compressed_message_size",
          "grpc.client.attempt.sent_total_compressed_message_size",
          "grpc.client.attempt.started",
          "grpc.client.call.duration",
        ],
      ],
    ]);
    const metrics = new Map(scopes.flatMap((s) => s.metrics).map((m) => [m.descriptor.name, m]));
    const started = metrics.get("grpc.client.attempt.started");
    expect(started?.dataPoints.map((p) => p.value)).toEqual([1]);
    expect(started?.descriptor.unit).toBe("{attempt}");
    const duration = metrics.get("grpc.client.attempt.duration");
    expect(duration?.dataPointType).toBe(DataPointType.HISTOGRAM);
    expect(duration?.descriptor.unit).toBe("s");
    const point = duration?.dataPoints[0] as {
      value: { buckets: { boundaries: number[] }; sum: number };
      attributes: object;
    };
    expect(point.value.buckets.boundaries).toEqual(LATENCY_BUCKETS);
    expect(point.value.sum).toBe(0.002);
    expect(point.attributes).toEqual({ ...labels, "grpc.lb.locality": "{zone}" });
    const sent = metrics.get("grpc.client.attempt.sent_total_compressed_message_size");
    expect(sent?.descriptor.unit).toBe("By");
    const sentPoint = sent?.dataPoints[0] as { value: { buckets: { boundaries: number[] } } } | undefined;
    expect(sentPoint?.value.buckets.boundaries).toEqual(SIZE_BUCKETS);
    expect(metrics.get("grpc.client.call.duration")?.dataPoints).toHaveLength(1);
    expect(metrics.get("grpc.client.attempt.rcvd_total_compressed_message_size")?.dataPoints).toHaveLength(1);
    await provider.shutdown();
  });
});
