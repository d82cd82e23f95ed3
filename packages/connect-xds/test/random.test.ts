import { describe, expect, it } from "vitest";
import { createUniform } from "../src/internal.js";

describe("createUniform", () => {
  it("draws in [0, 1), spread evenly over ten buckets", () => {
    const uniform = createUniform(12345);
    const buckets = new Array<number>(10).fill(0);
    let outside = 0;
    for (let i = 0; i < 100_000; i++) {
      const draw = uniform();
      if (!(draw >= 0 && draw < 1)) outside++;
      else buckets[Math.floor(draw * 10)]!++;
    }
    expect(outside).toBe(0);
    for (const count of buckets) expect(Math.abs(count - 10_000)).toBeLessThan(500);
  });

  it("repeats a sequence for a seed and differs between seeds", () => {
    const a = createUniform(7);
    const b = createUniform(7);
    const c = createUniform(8);
    const first = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(first);
    expect([c(), c(), c()]).not.toEqual(first);
  });
});
