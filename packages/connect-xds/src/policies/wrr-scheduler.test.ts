import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createSequence, createStrideScheduler, WRR_MAX_WEIGHT } from "./wrr-scheduler.js";

/** Picks per endpoint while the sequence runs from 0 through one full period (n × WRR_MAX_WEIGHT numbers). */
function countOnePeriod(weights: readonly number[]): number[] {
  const n = weights.length;
  const period = n * WRR_MAX_WEIGHT;
  let next = 0;
  let sequencesUsed = 0;
  const scheduler = createStrideScheduler(weights, () => {
    sequencesUsed = next;
    return next++;
  });
  if (scheduler === undefined) throw new Error("expected a scheduler");
  const counts = new Array<number>(n).fill(0);
  for (;;) {
    const i = scheduler.pick();
    if (sequencesUsed >= period) break;
    (counts[i] as number)++;
  }
  return counts;
}

describe("static stride scheduler (A58)", () => {
  it("falls back to round robin (undefined) when fewer than two weights are known", () => {
    expect(createStrideScheduler([], createSequence(0))).toBeUndefined();
    expect(createStrideScheduler([5], createSequence(0))).toBeUndefined();
    expect(createStrideScheduler([0, 0, 3], createSequence(0))).toBeUndefined();
    expect(createStrideScheduler([1, 0, 3], createSequence(0))).toBeDefined();
  });

  it("scales the largest weight to 65535 and gives unknown (0) weights the mean of the known ones", () => {
    const s = createStrideScheduler([2, 4, 0], createSequence(0));
    expect([...(s?.weights ?? [])]).toEqual([32768, 65535, 49151]);
  });

  it("caps known weights at 10× the mean and raises them to 1% of it", () => {
    // Mean of [1, 1000] is 500.5; 1000 stays (< 5005); 1 is raised to round(1% of the scaled mean).
    const s = createStrideScheduler([1, 1000], createSequence(0));
    expect([...(s?.weights ?? [])]).toEqual([328, 65535]);
    // Mean of 12 ones and one 1000 is ~77.8: 1000 is capped at 778 and scaled to the maximum.
    const many = createStrideScheduler([...new Array(12).fill(1), 1000], createSequence(0));
    expect(many?.weights[12]).toBe(65535);
    expect(many?.weights[0]).toBe(Math.round(65535 / ((1000 + 12) / 13 / 1) / 10));
  });

  it("refuses negative, NaN and infinite weights", () => {
    expect(() => createStrideScheduler([1, -1], createSequence(0))).toThrow(/not a finite non-negative/);
    expect(() => createStrideScheduler([1, Number.NaN], createSequence(0))).toThrow();
    expect(() => createStrideScheduler([1, Number.POSITIVE_INFINITY], createSequence(0))).toThrow();
  });

  it("property: over one full period each endpoint is picked exactly its scaled weight times", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: 2, maxLength: 4 }), (raw) => {
        const scheduler = createStrideScheduler(raw, createSequence(0));
        const counts = countOnePeriod(raw);
        return counts.every((c, i) => c === scheduler?.weights[i]);
      }),
      { numRuns: 15 },
    );
  });

  it("spreads picks: a 3:1 pair never gives the light endpoint two picks in a row", () => {
    const s = createStrideScheduler([3, 1], createSequence(12345));
    const picks = Array.from({ length: 400 }, () => s?.pick());
    for (let i = 1; i < picks.length; i++) expect(picks[i] === 1 && picks[i - 1] === 1).toBe(false);
    const light = picks.filter((p) => p === 1).length;
    expect(light).toBeGreaterThan(90);
    expect(light).toBeLessThan(110);
  });

  it("wraps the 32-bit sequence", () => {
    const seq = createSequence(0xffff_ffff);
    expect([seq(), seq(), seq()]).toEqual([0xffff_ffff, 0, 1]);
  });
});
