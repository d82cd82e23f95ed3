import { create } from "@bufbuild/protobuf";
import { OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { describe, expect, it } from "vitest";
import { createHarness, endpoint } from "../../test/support/policy-harness.js";
import type { CompletePick } from "../balancer/lb-policy.js";
import { createWrrPolicyFactory, WRR_METRICS } from "./wrr-policy.js";

const addresses = ["127.0.0.1:9201", "127.0.0.1:9202", "127.0.0.1:9203"];
const utilization: Record<string, number> = { "127.0.0.1:9201": 0.25, "127.0.0.1:9202": 0.5, "127.0.0.1:9203": 1 };

function setup(json: unknown = { blackoutPeriod: "10s", weightUpdatePeriod: "1s" }) {
  const h = createHarness();
  const f = createWrrPolicyFactory();
  const p = f.create(h.helper);
  p.update({ config: f.parseConfig(json), endpoints: addresses.map((a) => endpoint(a)) });
  for (const a of addresses) h.sub(a).set("READY");
  return { h, p };
}

/** Makes `calls` picks and ends each with the ORCA report its backend would send. */
function callWithReports(h: ReturnType<typeof createHarness>, calls: number) {
  const counts = new Map<string, number>();
  for (let i = 0; i < calls; i++) {
    const pick = h.pick() as CompletePick;
    const address = pick.subchannel.address;
    counts.set(address, (counts.get(address) ?? 0) + 1);
    const orcaReport = create(OrcaLoadReportSchema, {
      applicationUtilization: utilization[address] ?? 0,
      rpsFractional: 100,
    });
    pick.tracker?.onCallEnded?.({ code: 0, trailers: new Headers(), orcaReport });
  }
  return counts;
}

describe("weighted_round_robin policy (A58, A78)", () => {
  it("round-robins until weights are usable, counting the fallback and the endpoints not yet usable", () => {
    const { h } = setup();
    const counts = callWithReports(h, 300);
    expect([...counts.values()]).toEqual([100, 100, 100]);
    expect(h.counters.filter((c) => c.name === WRR_METRICS.rrFallback).length).toBeGreaterThan(0);
    expect(h.counters.filter((c) => c.name === WRR_METRICS.notYetUsable).length).toBeGreaterThan(0);
    expect(h.counters[0]?.labels).toEqual({
      "grpc.target": "xds:///test",
      "grpc.lb.locality": '{region="r", zone="z", sub_zone=""}',
    });
  });

  it("after the blackout period, sends traffic in proportion to qps / utilization (4:2:1)", () => {
    const { h } = setup();
    callWithReports(h, 30);
    h.clock.advance(9_000);
    callWithReports(h, 30);
    h.clock.advance(2_000);
    const counts = callWithReports(h, 7_000);
    expect(counts.get(addresses[0] as string)).toBeGreaterThan(3_900);
    expect(counts.get(addresses[0] as string)).toBeLessThan(4_100);
    expect(counts.get(addresses[2] as string)).toBeGreaterThan(950);
    expect(counts.get(addresses[2] as string)).toBeLessThan(1_050);
    const weights = h.histograms
      .filter((x) => x.name === WRR_METRICS.weights)
      .slice(-3)
      .map((x) => x.value);
    expect(weights).toEqual([400, 200, 100]);
  });

  it("counts stale weights after weight_expiration_period without reports and falls back to round robin", () => {
    const { h } = setup({ blackoutPeriod: "0s", weightExpirationPeriod: "5s", weightUpdatePeriod: "1s" });
    callWithReports(h, 30);
    h.clock.advance(1_000);
    const before = h.counters.filter((c) => c.name === WRR_METRICS.stale).length;
    h.clock.advance(6_000);
    expect(h.counters.filter((c) => c.name === WRR_METRICS.stale).length).toBeGreaterThan(before);
    const counts = new Map<string, number>();
    for (let i = 0; i < 300; i++) {
      const a = (h.pick() as CompletePick).subchannel.address;
      counts.set(a, (counts.get(a) ?? 0) + 1);
    }
    expect([...counts.values()]).toEqual([100, 100, 100]);
  });

  it("stops its timer when closed", () => {
    const { h, p } = setup();
    p.close();
    const n = h.histograms.length;
    h.clock.advance(10_000);
    expect(h.histograms.length).toBe(n);
    expect([...h.subchannels.values()].every((s) => s.closed)).toBe(true);
  });
});
