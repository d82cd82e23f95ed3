import { onTestFinished } from "vitest";
import type { MetricLabels, XdsFeatures, XdsGaugeName, XdsMetricsRecorder } from "../../src/index.js";
import { createXdsClientWithInternals } from "../../src/internal.js";
import { createFakeServer } from "./fake-transport.js";
import { createVirtualClock } from "./virtual-clock.js";

export const NODE_ID = "node-under-test";

/** Counters as `name{label=value,...}` → sum, and gauges collected on demand. */
export interface TestMetrics extends XdsMetricsRecorder {
  readonly counters: Map<string, number>;
  counter(name: string, labels?: Record<string, string>): number;
  gauges(): Map<string, number>;
}

function labelText(labels: MetricLabels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(",");
}

export function createTestMetrics(): TestMetrics {
  const counters = new Map<string, number>();
  let collect: ((record: (name: XdsGaugeName, value: number, labels: MetricLabels) => void) => void) | undefined;
  return {
    counters,
    addCounter(name, value, labels) {
      const key = `${name}{${labelText(labels)}}`;
      counters.set(key, (counters.get(key) ?? 0) + value);
    },
    registerGauges(callback) {
      collect = callback;
      return () => {
        collect = undefined;
      };
    },
    counter(name, labels = {}) {
      let sum = 0;
      for (const [key, value] of counters) {
        if (!key.startsWith(`${name}{`)) continue;
        if (Object.entries(labels).every(([k, v]) => key.includes(`${k}=${v}`))) sum += value;
      }
      return sum;
    },
    gauges() {
      const out = new Map<string, number>();
      collect?.((name, value, labels) => {
        const short =
          name === "grpc.xds_client.resources"
            ? `resources{${labels["grpc.xds.authority"]},${labels["grpc.xds.cache_state"]}}`
            : `connected{${labels["grpc.xds.server"]}}`;
        out.set(short, (out.get(short) ?? 0) + value);
      });
      return out;
    },
  };
}

export interface SetupOptions {
  readonly serverFeatures?: string[];
  readonly features?: Partial<XdsFeatures>;
  readonly bootstrap?: Record<string, unknown>;
}

/** A client on an in-memory transport and a virtual clock; call it inside a test. */
export function setup(options: SetupOptions = {}) {
  const server = createFakeServer();
  const clock = createVirtualClock();
  const metrics = createTestMetrics();
  const bootstrap = {
    xds_servers: [
      {
        server_uri: "primary:443",
        channel_creds: [{ type: "insecure" }],
        server_features: options.serverFeatures ?? [],
      },
    ],
    node: { id: NODE_ID },
    ...options.bootstrap,
  };
  const client = createXdsClientWithInternals(
    {
      bootstrap,
      env: {},
      transportFactory: server.transportFactory,
      metrics,
      ...(options.features ? { features: options.features } : {}),
    },
    { clock, random: () => 0.5 },
  );
  // Closed when the test ends, pass or fail.
  onTestFinished(() => client.close());
  return { client, server, clock, metrics };
}
