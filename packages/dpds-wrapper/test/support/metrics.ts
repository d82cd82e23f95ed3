// A metrics recorder for the client: counters summed per series, gauges collected on demand.
import type { MetricLabels, XdsMetricsRecorder } from "@xdskit/xds-client";

export interface TestMetrics extends XdsMetricsRecorder {
  /** Counter series as `name{label=value,...}` (labels sorted) → sum. */
  readonly counters: Map<string, number>;
  /** Every gauge series as `name{label=value,...}` → value. */
  gauges(): Map<string, number>;
}

function seriesName(name: string, labels: MetricLabels): string {
  const text = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(",");
  return `${name}{${text}}`;
}

export function testMetrics(): TestMetrics {
  const counters = new Map<string, number>();
  let collect: Parameters<NonNullable<XdsMetricsRecorder["registerGauges"]>>[0] | undefined;
  return {
    counters,
    addCounter(name, value, labels) {
      const key = seriesName(name, labels);
      counters.set(key, (counters.get(key) ?? 0) + value);
    },
    registerGauges(callback) {
      collect = callback;
      return () => {
        collect = undefined;
      };
    },
    gauges() {
      const out = new Map<string, number>();
      collect?.((name, value, labels) => out.set(seriesName(name, labels), value));
      return out;
    },
  };
}
