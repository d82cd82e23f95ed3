import { describe, expect, it } from "vitest";
import { createHarness, endpoint, seededRandom } from "../../test/support/policy-harness.js";
import type { CompletePick, LbPolicyFactory } from "../balancer/lb-policy.js";
import { createLeastRequestPolicyFactory } from "./least-request-policy.js";
import { createOutlierDetectionPolicyFactory, parseOutlierDetectionConfig } from "./outlier-detection-policy.js";

const addresses = ["10.1.0.1:80", "10.1.0.2:80", "10.1.0.3:80", "10.1.0.4:80", "10.1.0.5:80"];
const json = {
  interval: "10s",
  baseEjectionTime: "30s",
  maxEjectionPercent: 50,
  failurePercentageEjection: { threshold: 50, minimumHosts: 3, requestVolume: 10 },
  childPolicy: [{ least_request_experimental: { choiceCount: 2 } }],
};

function setup() {
  const h = createHarness(seededRandom(3), [createLeastRequestPolicyFactory() as LbPolicyFactory]);
  const f = createOutlierDetectionPolicyFactory();
  const p = f.create(h.helper);
  p.update({ config: f.parseConfig(json), endpoints: addresses.map((a) => endpoint(a)) });
  for (const a of addresses) h.sub(a).set("READY");
  return { h, p };
}

/** Makes `n` calls; those to `bad` fail with UNAVAILABLE. Returns the calls each address got. */
function calls(h: ReturnType<typeof createHarness>, n: number, bad: string) {
  const counts = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const pick = h.pick() as CompletePick;
    const a = pick.subchannel.address;
    counts.set(a, (counts.get(a) ?? 0) + 1);
    pick.tracker?.onCallStarted?.();
    pick.tracker?.onCallEnded?.({ code: a === bad ? 14 : 0, trailers: new Headers(), orcaReport: undefined });
  }
  return counts;
}

describe("outlier_detection policy (A50)", () => {
  it("parses gRPC's JSON with A50's defaults and refuses bad values", () => {
    expect(parseOutlierDetectionConfig({ childPolicy: [] })).toEqual({
      intervalMs: 10_000,
      baseEjectionTimeMs: 30_000,
      maxEjectionTimeMs: 300_000,
      maxEjectionPercent: 10,
      childPolicy: [],
    });
    expect(parseOutlierDetectionConfig({ successRateEjection: {}, childPolicy: [] }).successRateEjection).toEqual({
      stdevFactor: 1900,
      enforcementPercentage: 100,
      minimumHosts: 5,
      requestVolume: 100,
    });
    expect(() => parseOutlierDetectionConfig({ maxEjectionPercent: 101, childPolicy: [] })).toThrow(
      /maxEjectionPercent/,
    );
    expect(() => parseOutlierDetectionConfig({ interval: "x", childPolicy: [] })).toThrow(/interval/);
    expect(() => parseOutlierDetectionConfig({})).toThrow(/childPolicy/);
  });

  it("ejects the failing endpoint at the next interval, so the child stops picking it, then brings it back", () => {
    const { h } = setup();
    const bad = addresses[2] as string;
    const before = calls(h, 200, bad);
    expect(before.get(bad)).toBeGreaterThan(10);
    h.clock.advance(10_000);
    const during = calls(h, 200, bad);
    expect(during.has(bad)).toBe(false);
    // Ejected for 30 s (multiplier 1) from the 10 s tick: back at the 40 s tick.
    h.clock.advance(20_000);
    expect(calls(h, 200, bad).has(bad)).toBe(false);
    h.clock.advance(10_000);
    expect(calls(h, 200, bad).get(bad)).toBeGreaterThan(0);
  });

  it("passes the child's subchannel (not the wrapper) to the call, and counts nothing when no algorithm is set", () => {
    const h = createHarness(seededRandom(3), [createLeastRequestPolicyFactory() as LbPolicyFactory]);
    const f = createOutlierDetectionPolicyFactory();
    const p = f.create(h.helper);
    p.update({
      config: f.parseConfig({ childPolicy: json.childPolicy }),
      endpoints: addresses.map((a) => endpoint(a)),
    });
    for (const a of addresses) h.sub(a).set("READY");
    const pick = h.pick() as CompletePick;
    expect(pick.subchannel).toBe(h.sub(pick.subchannel.address));
    calls(h, 100, addresses[0] as string);
    h.clock.advance(60_000);
    expect(calls(h, 200, "none").has(addresses[0] as string)).toBe(true);
  });
});
