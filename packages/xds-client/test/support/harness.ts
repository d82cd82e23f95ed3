import { ClientResourceStatus } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import type { ClientConfig } from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import { onTestFinished } from "vitest";
import type {
  BootstrapConfig,
  Logger,
  MetricLabels,
  XdsFeatures,
  XdsGaugeName,
  XdsMetricsRecorder,
} from "../../src/index.js";
import { createXdsClientWithInternals } from "../../src/internal.js";
import { apiTypeOf, createFakeServer, type Protocol } from "./fake-transport.js";
import { createVirtualClock } from "./virtual-clock.js";

export const NODE_ID = "node-under-test";

/** Counters as `name{label=value,...}` → sum, and gauges collected on demand. */
export interface TestMetrics extends XdsMetricsRecorder {
  readonly counters: Map<string, number>;
  counter(name: string, labels?: Record<string, string>): number;
  gauges(): Map<string, number>;
  /** Every gauge series as `name{label=value,...}` (labels sorted) → value. */
  gaugeSeries(): Map<string, number>;
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
    gaugeSeries() {
      const out = new Map<string, number>();
      collect?.((name, value, labels) => out.set(`${name}{${labelText(labels)}}`, value));
      return out;
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
  /** The ADS protocol of every server in the bootstrap (default state of the world). */
  readonly protocol?: Protocol;
  readonly serverFeatures?: string[];
  readonly features?: Partial<XdsFeatures>;
  readonly bootstrap?: Record<string, unknown>;
  readonly connectTimeoutMs?: number;
  readonly logger?: Logger;
  /** SotW: the byte-identical skip (default on); off to compare against. */
  readonly decodeMemo?: boolean;
  /** A re-push of what an entry holds ACKed only moves its version (`reapplyIdentical`, default on); off to compare. */
  readonly reapplyIdentical?: boolean;
  /** SotW: the transport hands decoded DiscoveryResponses, as a custom one may (default: SotwResponseBytes). */
  readonly decodedSotw?: boolean;
  /** Delta responses handed decoded (DeltaDiscoveryResponse) rather than as DeltaResponseBytes. */
  readonly decodedDelta?: boolean;
  /** The client's random source (default 0.5 always: backoff without jitter). */
  readonly random?: () => number;
}

/** Sets `api_type` on every server of a bootstrap (top level and per authority). */
function withApiType(bootstrap: Record<string, unknown>, protocol: Protocol): Record<string, unknown> {
  const servers = (list: unknown) =>
    Array.isArray(list) ? list.map((s: Record<string, unknown>) => ({ ...s, api_type: apiTypeOf(protocol) })) : list;
  const authorities = bootstrap.authorities as Record<string, Record<string, unknown>> | undefined;
  return {
    ...bootstrap,
    xds_servers: servers(bootstrap.xds_servers),
    ...(authorities === undefined
      ? {}
      : {
          authorities: Object.fromEntries(
            Object.entries(authorities).map(([name, a]) => [
              name,
              a.xds_servers === undefined ? a : { ...a, xds_servers: servers(a.xds_servers) },
            ]),
          ),
        }),
  };
}

/** A client on an in-memory transport and a virtual clock; call it inside a test. */
export function setup(options: SetupOptions = {}) {
  const server = createFakeServer({
    decodedSotw: options.decodedSotw ?? false,
    decodedDelta: options.decodedDelta ?? false,
  });
  const clock = createVirtualClock();
  const metrics = createTestMetrics();
  const bootstrap = withApiType(
    {
      xds_servers: [
        {
          server_uri: "primary:443",
          channel_creds: [{ type: "insecure" }],
          server_features: options.serverFeatures ?? [],
        },
      ],
      node: { id: NODE_ID },
      ...options.bootstrap,
    },
    options.protocol ?? "sotw",
  );
  const client = createXdsClientWithInternals(
    {
      // Tests also pass malformed bootstraps on purpose: the parser, not the type, is under test there.
      bootstrap: bootstrap as unknown as BootstrapConfig,
      env: {},
      transportFactory: server.transportFactory,
      metrics,
      ...(options.features ? { features: options.features } : {}),
      ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    },
    {
      clock,
      random: options.random ?? (() => 0.5),
      ...(options.decodeMemo === undefined ? {} : { decodeMemo: options.decodeMemo }),
      ...(options.reapplyIdentical === undefined ? {} : { reapplyIdentical: options.reapplyIdentical }),
    },
  );
  // Closed when the test ends, pass or fail.
  onTestFinished(() => client.close());
  return { client, server, clock, metrics, protocol: options.protocol ?? "sotw" };
}

/** CSDS as the tests assert it: one row per entry. */
export interface CsdsRow {
  readonly name: string;
  readonly status: string;
  readonly version: string;
  readonly hasConfig: boolean;
  /** `version|details|time?` of error_state: the version is empty and time absent when CSDS carries details only. */
  readonly error: string | undefined;
}

export function csdsRows(client: { dumpResources(): ClientConfig }): CsdsRow[] {
  return client.dumpResources().genericXdsConfigs.map((c) => ({
    name: c.name,
    status: ClientResourceStatus[c.clientStatus] ?? String(c.clientStatus),
    version: c.versionInfo,
    hasConfig: c.xdsConfig !== undefined,
    error: c.errorState
      ? `${c.errorState.versionInfo}|${c.errorState.details}${c.errorState.lastUpdateAttempt ? "|time" : ""}`
      : undefined,
  }));
}

/** The statuses of every CSDS entry, in order. */
export function csdsStatuses(client: { dumpResources(): ClientConfig }): string[] {
  return csdsRows(client).map((r) => r.status);
}
