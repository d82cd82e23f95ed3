import type { OutlierDetectionConfig } from "@xdskit/xds-client";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createOutlierDetector } from "./outlier-detection.js";

const base: OutlierDetectionConfig = {
  intervalMs: 10_000,
  baseEjectionTimeMs: 30_000,
  maxEjectionTimeMs: 300_000,
  maxEjectionPercent: 100,
};
const successRate = { stdevFactor: 1900, enforcementPercentage: 100, minimumHosts: 5, requestVolume: 100 };
const failurePercentage = { threshold: 85, enforcementPercentage: 100, minimumHosts: 5, requestVolume: 50 };
const keys = (n: number) => Array.from({ length: n }, (_, i) => `10.0.0.${i}:80`);

/** Records `ok` successes and `bad` failures on an endpoint's counter. */
function record(d: ReturnType<typeof createOutlierDetector>, key: string, ok: number, bad: number) {
  const c = d.counter(key);
  if (c === undefined) throw new Error(`no counter for ${key}`);
  for (let i = 0; i < ok; i++) c.recordSuccess();
  for (let i = 0; i < bad; i++) c.recordFailure();
}

describe("outlier detection (A50)", () => {
  it("success rate: ejects an endpoint below mean - stdev × factor, then un-ejects it after base × multiplier", () => {
    const d = createOutlierDetector({ ...base, successRateEjection: successRate }, () => 0);
    const k = keys(5);
    d.setEndpoints(k);
    for (const key of k.slice(0, 4)) record(d, key, 100, 0);
    record(d, k[4] as string, 50, 50);
    expect(d.tick(10_000)).toEqual({ ejected: [k[4]], unejected: [] });
    expect(d.isEjected(k[4] as string)).toBe(true);
    // Multiplier 1: ejected for 30 s from 10 s.
    expect(d.tick(20_000)).toEqual({ ejected: [], unejected: [] });
    expect(d.tick(40_000)).toEqual({ ejected: [], unejected: [k[4]] });
  });

  it("success rate: does nothing with fewer than minimum_hosts endpoints at request_volume", () => {
    const d = createOutlierDetector({ ...base, successRateEjection: successRate }, () => 0);
    const k = keys(5);
    d.setEndpoints(k);
    for (const key of k.slice(0, 3)) record(d, key, 100, 0);
    record(d, k[3] as string, 99, 0);
    record(d, k[4] as string, 0, 100);
    expect(d.tick(10_000).ejected).toEqual([]);
  });

  it("failure percentage: ejects above the threshold only, and counts only the last interval", () => {
    const d = createOutlierDetector({ ...base, failurePercentageEjection: failurePercentage }, () => 0);
    const k = keys(5);
    d.setEndpoints(k);
    for (const key of k) record(d, key, 50, 0);
    record(d, k[0] as string, 0, 300); // 300/350 = 85.7 % > 85
    record(d, k[1] as string, 0, 283); // 283/333 = 84.98 % ≤ 85
    expect(d.tick(10_000).ejected).toEqual([k[0]]);
    // Nothing recorded since: the swapped-in bucket is empty, nothing reaches request_volume.
    expect(d.tick(20_000).ejected).toEqual([]);
  });

  it("enforcement_percentage: ejects only when the draw in [0, 100) is below it", () => {
    let draw = 0.5;
    const d = createOutlierDetector(
      { ...base, failurePercentageEjection: { ...failurePercentage, enforcementPercentage: 50 } },
      () => draw,
    );
    const k = keys(5);
    d.setEndpoints(k);
    for (const key of k) record(d, key, 0, 100);
    expect(d.tick(10_000).ejected).toEqual([]);
    for (const key of k) record(d, key, 0, 100);
    draw = 0.49;
    expect(d.tick(20_000).ejected).toEqual(k);
  });

  it("max_ejection_percent stops ejections once reached, but always allows the first", () => {
    const d = createOutlierDetector({ ...base, maxEjectionPercent: 20, failurePercentageEjection: failurePercentage });
    const k = keys(10);
    d.setEndpoints(k);
    for (const key of k) record(d, key, 0, 100);
    expect(d.tick(10_000).ejected).toHaveLength(2);
    const one = createOutlierDetector({ ...base, maxEjectionPercent: 0, failurePercentageEjection: failurePercentage });
    one.setEndpoints(k);
    for (const key of k) record(one, key, 0, 100);
    expect(one.tick(10_000).ejected).toHaveLength(1);
  });

  it("the multiplier grows with each ejection, shrinks each clean interval, and is capped by max_ejection_time", () => {
    const cfg = {
      ...base,
      maxEjectionTimeMs: 50_000,
      failurePercentageEjection: { ...failurePercentage, minimumHosts: 1 },
    };
    const d = createOutlierDetector(cfg, () => 0);
    const [key] = keys(1) as [string];
    d.setEndpoints([key]);
    record(d, key, 0, 100);
    d.tick(0); // ejected, multiplier 1 → 30 s
    expect(d.tick(30_000).unejected).toEqual([key]);
    record(d, key, 0, 100);
    d.tick(40_000); // ejected again, multiplier 2 → min(60 s, 50 s) = 50 s
    expect(d.tick(89_999).unejected).toEqual([]);
    expect(d.tick(90_000).unejected).toEqual([key]);
    // Two clean intervals bring the multiplier back to 0: the next ejection lasts 30 s again.
    d.tick(100_000);
    d.tick(110_000);
    record(d, key, 0, 100);
    d.tick(120_000);
    expect(d.tick(149_999).unejected).toEqual([]);
    expect(d.tick(150_000).unejected).toEqual([key]);
  });

  it("a config without algorithms un-ejects everything; removed endpoints are forgotten", () => {
    const d = createOutlierDetector({ ...base, failurePercentageEjection: failurePercentage }, () => 0);
    const k = keys(5);
    d.setEndpoints(k);
    for (const key of k) record(d, key, 0, 100);
    expect(d.tick(10_000).ejected).toHaveLength(5);
    d.setEndpoints(k.slice(1));
    expect(d.counter(k[0] as string)).toBeUndefined();
    expect(d.updateConfig(base).unejected).toEqual(k.slice(1));
    expect(k.some((key) => d.isEjected(key))).toBe(false);
  });

  it("property: never ejects past max_ejection_percent beyond the first, and only endpoints over the threshold", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(120), fc.nat(120)), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 0, max: 100 }),
        (calls, maxPercent) => {
          const d = createOutlierDetector({
            ...base,
            maxEjectionPercent: maxPercent,
            failurePercentageEjection: failurePercentage,
          });
          const k = keys(calls.length);
          d.setEndpoints(k);
          calls.forEach(([ok, bad], i) => {
            record(d, k[i] as string, ok, bad);
          });
          const { ejected } = d.tick(1);
          const allowed = Math.max(1, Math.ceil((maxPercent * k.length) / 100));
          const eligible = calls.filter(([ok, bad]) => ok + bad >= 50).length >= 5;
          return (
            ejected.length <= allowed &&
            (eligible || ejected.length === 0) &&
            ejected.every((key) => {
              const [ok, bad] = calls[k.indexOf(key)] as [number, number];
              return ok + bad >= 50 && (100 * bad) / (ok + bad) > 85;
            })
          );
        },
      ),
    );
  });
});
