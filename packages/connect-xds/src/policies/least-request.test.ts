import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { leastRequestChoiceCount, leastRequestPick } from "./least-request.js";

/** A random source replaying `values` (each in [0, 1)). */
const replay = (values: readonly number[]) => {
  let i = 0;
  return () => values[i++ % values.length] as number;
};

describe("least_request (A48)", () => {
  it("defaults choice_count to 2, caps it at 10 and refuses less than 2", () => {
    expect(leastRequestChoiceCount(undefined)).toBe(2);
    expect(leastRequestChoiceCount(7)).toBe(7);
    expect(leastRequestChoiceCount(11)).toBe(10);
    expect(() => leastRequestChoiceCount(1)).toThrow(/≥ 2/);
    expect(() => leastRequestChoiceCount(2.5)).toThrow(/integer/);
  });

  it("takes the sampled endpoint with the fewest outstanding calls, the first sample on a tie", () => {
    const outstanding = [5, 1, 3, 1].map((outstanding) => ({ outstanding }));
    // Samples 0 (load 5) and 2 (load 3): 2 wins.
    expect(leastRequestPick(outstanding, 2, replay([0.1, 0.6]))).toBe(2);
    // Samples 1 and 3, both load 1: the first sampled (1) wins; then 3 and 1: 3 wins.
    expect(leastRequestPick(outstanding, 2, replay([0.3, 0.8]))).toBe(1);
    expect(leastRequestPick(outstanding, 2, replay([0.8, 0.3]))).toBe(3);
    expect(leastRequestPick([], 2, Math.random)).toBe(-1);
  });

  it("property: the pick is the minimum over exactly choiceCount samples", () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(50), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 2, max: 10 }),
        fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 10, maxLength: 10 }),
        (loads, choices, draws) => {
          const sampled = draws.slice(0, choices).map((d) => Math.floor(d * loads.length));
          const picked = leastRequestPick(
            loads.map((outstanding) => ({ outstanding })),
            choices,
            replay(draws),
          );
          const min = Math.min(...sampled.map((i) => loads[i] as number));
          return sampled.includes(picked) && loads[picked] === min && sampled.find((i) => loads[i] === min) === picked;
        },
      ),
    );
  });

  it("sends more calls to less loaded endpoints than uniform picking would", () => {
    // Endpoint 0 always has 10 outstanding calls, the others none: with 2 choices it is chosen only when both
    // samples hit it, 1/16 of the time among 4 endpoints, against 1/4 for round robin.
    const loads = [10, 0, 0, 0].map((outstanding) => ({ outstanding }));
    let seed = 1;
    const lcg = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    let hits = 0;
    for (let i = 0; i < 16_000; i++) if (leastRequestPick(loads, 2, lcg) === 0) hits++;
    expect(hits).toBeGreaterThan(600);
    expect(hits).toBeLessThan(1400);
  });
});
