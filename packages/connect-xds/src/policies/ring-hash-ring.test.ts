import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  buildHashRing,
  DEFAULT_RING_SIZE_CAP,
  RING_SIZE_UPPER_BOUND,
  type RingEndpoint,
  resolveRingHashConfig,
} from "./ring-hash-ring.js";
import { xxHash64 } from "./xx-hash64.js";

const cfg = (minRingSize: number, maxRingSize = DEFAULT_RING_SIZE_CAP) => ({ minRingSize, maxRingSize });
const endpoints = (weights: readonly number[]): RingEndpoint[] =>
  weights.map((weight, i) => ({ key: `10.0.${i >> 8}.${i & 255}:8080`, weight }));
const split = (h: bigint) => [Number(h >> 32n), Number(h & 0xffffffffn)] as const;

/** Slow path: the first entry with hash ≥ h by a linear scan, wrapping to 0. */
function linearFind(ring: ReturnType<typeof buildHashRing>, h: bigint): number {
  for (let p = 0; p < ring.size; p++) if (ring.hashAt(p) >= h) return p;
  return 0;
}

describe("resolveRingHashConfig", () => {
  it("defaults to min 1024 and xDS's max 8M, capped to the local cap of 4096", () => {
    expect(resolveRingHashConfig({})).toEqual({ ok: true, config: { minRingSize: 1024, maxRingSize: 4096 } });
    expect(resolveRingHashConfig({ minimumRingSize: 10, maximumRingSize: 100 })).toEqual({
      ok: true,
      config: { minRingSize: 10, maxRingSize: 100 },
    });
    expect(resolveRingHashConfig({ minimumRingSize: 5000n, maximumRingSize: 6000n })).toEqual({
      ok: true,
      config: { minRingSize: 4096, maxRingSize: 4096 },
    });
    expect(resolveRingHashConfig({ minimumRingSize: 5000 }, 100_000)).toEqual({
      ok: true,
      config: { minRingSize: 5000, maxRingSize: 100_000 },
    });
  });

  it("refuses sizes above 8M, zero, and min above max, naming the field", () => {
    const over = resolveRingHashConfig({ maximumRingSize: RING_SIZE_UPPER_BOUND + 1 });
    expect(over).toEqual({ ok: false, error: expect.stringContaining("maximum_ring_size 8388609") });
    expect(resolveRingHashConfig({ minimumRingSize: 0 })).toEqual({
      ok: false,
      error: expect.stringContaining("minimum_ring_size 0"),
    });
    expect(resolveRingHashConfig({ minimumRingSize: 200, maximumRingSize: 100 })).toEqual({
      ok: false,
      error: expect.stringContaining("greater than maximum_ring_size"),
    });
    expect(resolveRingHashConfig({}, 0).ok).toBe(false);
  });
});

describe("buildHashRing", () => {
  it("sizes the ring so the lightest endpoint gets whole entries (A42's locality × endpoint example)", () => {
    // A42: locality weights 3 and 2 times endpoint weights give A=6, B=3, C=6, D=2 (total 17).
    const ring = buildHashRing(endpoints([6, 3, 6, 2]), cfg(1024));
    // scale = ceil(2/17 * 1024) / (2/17) = 121 * 8.5 = 1028.5, ring size = ceil(scale) = 1029.
    expect(ring.size).toBe(1029);
    const counts = [0, 0, 0, 0];
    for (let p = 0; p < ring.size; p++) (counts[ring.endpointAt(p)] as number)++;
    // Each endpoint's entries are the running target (scale * w / total, summed) rounded up, minus the previous.
    expect(counts).toEqual([363, 182, 363, 121]);
  });

  it("is clamped by maxRingSize: 10,000 endpoints at min 1,024 make a ring of the 4,096 cap", () => {
    const ring = buildHashRing(endpoints(new Array(10_000).fill(1)), cfg(1024));
    expect(ring.size).toBe(4096);
    expect(ring.endpointCount).toBe(10_000);
  });

  it("hashes endpoint i's n-th entry as XXH64 of key_n and keeps the ring sorted", () => {
    const eps = endpoints([1, 2, 3]);
    const ring = buildHashRing(eps, cfg(12, 100));
    const expected = new Map<string, number>();
    const counts = [0, 0, 0];
    for (let p = 0; p < ring.size; p++) (counts[ring.endpointAt(p)] as number)++;
    eps.forEach((e, i) => {
      for (let n = 0; n < (counts[i] as number); n++) expected.set(xxHash64(`${e.key}_${n}`).toString(), i);
    });
    for (let p = 0; p < ring.size; p++) {
      expect(expected.get(ring.hashAt(p).toString())).toBe(ring.endpointAt(p));
      if (p > 0) expect(ring.hashAt(p) >= ring.hashAt(p - 1)).toBe(true);
    }
    expect(counts).toEqual([2, 4, 6]);
  });

  it("places two endpoints of one key (A76 hash keys alike) at the same points, the first before the second", () => {
    const ring = buildHashRing(
      [
        { key: "a", weight: 1 },
        { key: "b", weight: 1 },
        { key: "a", weight: 1 },
      ],
      cfg(12, 12),
    );
    const owners = Array.from({ length: ring.size }, (_, p) => ring.endpointAt(p));
    expect(owners.filter((o) => o === 0).length).toBe(owners.filter((o) => o === 2).length);
    for (let p = 0; p < ring.size; p++) {
      if (ring.endpointAt(p) !== 2) continue;
      // Endpoint 2's point repeats endpoint 0's just before it: a hash finds endpoint 0 first.
      expect(ring.endpointAt(p - 1)).toBe(0);
      expect(ring.hashAt(p - 1)).toBe(ring.hashAt(p));
      expect(ring.find(Number(ring.hashAt(p) >> 32n), Number(ring.hashAt(p) & 0xffff_ffffn))).toBe(p - 1);
    }
  });

  it("refuses empty keys and non-positive weights; an empty list makes an empty ring", () => {
    expect(() => buildHashRing([{ key: "", weight: 1 }], cfg(8))).toThrow(/empty/);
    expect(() => buildHashRing([{ key: "a", weight: 0 }], cfg(8))).toThrow(/weight 0/);
    expect(() => buildHashRing([{ key: "a", weight: Number.NaN }], cfg(8))).toThrow(/weight NaN/);
    expect(buildHashRing([], cfg(8)).size).toBe(0);
  });

  it("property: find (binary search) returns what a linear scan returns, including wrap-around", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 300 }),
        fc.array(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), { minLength: 1, maxLength: 20 }),
        (weights, minRingSize, hashes) => {
          const ring = buildHashRing(endpoints(weights), cfg(minRingSize, 600));
          const probes = [...hashes, ring.hashAt(0), ring.hashAt(ring.size - 1), ring.hashAt(ring.size - 1) + 1n];
          return probes.every((h) => {
            const bounded = h & ((1n << 64n) - 1n);
            const [hi, lo] = split(bounded);
            return ring.find(hi, lo) === linearFind(ring, bounded);
          });
        },
      ),
    );
  });

  it("property: each endpoint gets its weight's share of the scaled ring, to within one entry", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 40 }), (weights) => {
        const ring = buildHashRing(endpoints(weights), cfg(512, 4096));
        const total = weights.reduce((a, b) => a + b, 0);
        const minNormalized = Math.min(...weights) / total;
        const scale = Math.min(Math.ceil(minNormalized * 512) / minNormalized, 4096);
        const counts = new Array<number>(weights.length).fill(0);
        for (let p = 0; p < ring.size; p++) (counts[ring.endpointAt(p)] as number)++;
        return (
          ring.size === Math.ceil(scale) &&
          weights.every((w, i) => Math.abs((counts[i] as number) - (scale * w) / total) < 1 + 1e-9)
        );
      }),
    );
  });

  it("property: with one entry per endpoint, removing an endpoint moves only the hashes that mapped to it", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 40 }),
        fc.nat(),
        fc.array(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), { minLength: 50, maxLength: 50 }),
        (n, removedSeed, hashes) => {
          const all = endpoints(new Array(n).fill(1));
          const removed = removedSeed % n;
          const rest = all.filter((_, i) => i !== removed);
          const before = buildHashRing(all, cfg(1));
          const after = buildHashRing(rest, cfg(1));
          return hashes.every((h) => {
            const [hi, lo] = split(h);
            const owner = all[before.endpointAt(before.find(hi, lo))]?.key;
            const newOwner = rest[after.endpointAt(after.find(hi, lo))]?.key;
            return owner === all[removed]?.key || owner === newOwner;
          });
        },
      ),
    );
  });
});
