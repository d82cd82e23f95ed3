// A78's weighted_round_robin metrics over real HTTP/2, through the transport's `metrics` recorder: before any ORCA
// report every scheduler update falls back to round robin (rr_fallback) with both endpoints' weights not yet usable
// (recorded as 0); once the backends' per-call reports arrive, the recorded weights are qps / utilization (100 / 0.2
// and 100 / 0.4); when reports stop for longer than weight_expiration_period, the weights are stale. Every record
// carries the target and the endpoint's locality.
import { createClient } from "@connectrpc/connect";
import type { ManagementServer } from "@xdskit/control-plane";
import type { Cluster } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { EchoService } from "./support/echo-service.js";
import { clientFor, simpleSnapshot, startControlPlane } from "./support/harness.js";
import { orcaTrailer, seconds, wrrPolicy } from "./support/policy-config.js";

interface Recorded {
  readonly name: string;
  readonly value: number;
  readonly labels: Readonly<Record<string, string>>;
}

const LOCALITY = '{region="", zone="z1", sub_zone=""}';
const TARGET = "xds:///wrr-metrics";

/** Resolves once `condition` holds, checking every 10 ms (at most 15 s). */
async function until(condition: () => boolean): Promise<void> {
  const start = performance.now();
  while (!condition()) {
    if (performance.now() - start > 15_000) throw new Error("condition not met within 15 s");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("weighted_round_robin metrics (A78)", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let backends: Backend[];
  let transport: XdsTransport;
  const records: Recorded[] = [];

  beforeAll(async () => {
    server = await startControlPlane();
    client = clientFor(server);
    backends = await Promise.all([
      startBackend("a", { interceptors: [orcaTrailer(0.2)] }),
      startBackend("b", { interceptors: [orcaTrailer(0.4)] }),
    ]);
  });
  afterAll(async () => {
    await transport.close();
    await client.close();
    await Promise.all(backends.map((b) => b.close()));
    await server.close();
  });

  it("counts the round robin fallback and unusable weights, then records the weights, then their staleness", async () => {
    const resources = simpleSnapshot("wrr-metrics", "wrr-metrics-cluster", [
      { zone: "z1", endpoints: backends.map((b) => b.address) },
    ]);
    wrrPolicy(resources[2] as Cluster, {
      blackoutPeriod: seconds(0),
      weightUpdatePeriod: seconds(0.1),
      weightExpirationPeriod: seconds(0.3),
    });
    server.setSnapshot(resources);
    transport = createXdsTransport({
      target: TARGET,
      client,
      metrics: {
        addCounter: (name, value, labels) => records.push({ name, value, labels }),
        recordHistogram: (name, value, labels) => records.push({ name, value, labels }),
      },
    });
    const echo = createClient(EchoService, transport) as unknown as {
      unary(request: { value: string }): Promise<{ value: string }>;
    };
    const named = (name: string) => records.filter((r) => r.name === name);
    const weights = () => named("grpc.lb.wrr.endpoint_weights").map((r) => r.value);

    // No reports yet: the first picker falls back to round robin, neither weight usable.
    await until(() => named("grpc.lb.wrr.rr_fallback").length > 0);
    expect(named("grpc.lb.wrr.endpoint_weight_not_yet_usable").length).toBeGreaterThanOrEqual(2);
    expect(weights().slice(0, 2)).toEqual([0, 0]);

    // Calls carry reports until an update (every 0.1 s) has used both.
    const fallbacks = () => named("grpc.lb.wrr.rr_fallback").length;
    const weighted = () =>
      weights().some((w) => Math.abs(w - 500) < 1e-6) && weights().some((w) => Math.abs(w - 250) < 1e-6);
    for (let round = 0; round < 300 && !weighted(); round++) {
      await Promise.all(Array.from({ length: 5 }, () => echo.unary({ value: "x" })));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(weighted()).toBe(true);
    const fallbacksOnceWeighted = fallbacks();

    // No more calls: after 0.3 s without reports both weights go stale (and round robin is back).
    await until(() => named("grpc.lb.wrr.endpoint_weight_stale").length >= 2);
    await until(() => fallbacks() > fallbacksOnceWeighted);

    for (const record of records.filter((r) => r.name.startsWith("grpc.lb.wrr."))) {
      expect(record.labels).toEqual({ "grpc.target": TARGET, "grpc.lb.locality": LOCALITY });
      expect(record.value).toBeGreaterThanOrEqual(0);
    }
  });
});
