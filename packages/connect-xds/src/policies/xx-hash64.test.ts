import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { xxHash64, xxHash64Into, xxHash64StringInto } from "./xx-hash64.js";

// Reference: the definition of XXH64 written directly on bigints (slow and obviously equal to the
// specification), against which the 32-bit-halves implementation is checked byte for byte.
const M = (1n << 64n) - 1n;
const P1 = 0x9e3779b185ebca87n;
const P2 = 0xc2b2ae3d27d4eb4fn;
const P3 = 0x165667b19e3779f9n;
const P4 = 0x85ebca77c2b2ae63n;
const P5 = 0x27d4eb2f165667c5n;
const rotl = (x: bigint, r: bigint) => ((x << r) | (x >> (64n - r))) & M;
const round = (acc: bigint, input: bigint) => (rotl((acc + input * P2) & M, 31n) * P1) & M;
const le = (b: Uint8Array, i: number, n: number) => {
  let v = 0n;
  for (let k = n - 1; k >= 0; k--) v = (v << 8n) | BigInt(b[i + k] as number);
  return v;
};
function reference(b: Uint8Array): bigint {
  let i = 0;
  let h: bigint;
  if (b.length >= 32) {
    const v = [(P1 + P2) & M, P2, 0n, (M + 1n - P1) & M];
    for (; i + 32 <= b.length; i += 32) for (let k = 0; k < 4; k++) v[k] = round(v[k] as bigint, le(b, i + 8 * k, 8));
    const [v1, v2, v3, v4] = v as [bigint, bigint, bigint, bigint];
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & M;
    for (const x of v) h = ((h ^ round(0n, x)) * P1 + P4) & M;
  } else h = P5;
  h = (h + BigInt(b.length)) & M;
  for (; i + 8 <= b.length; i += 8) h = (rotl(h ^ round(0n, le(b, i, 8)), 27n) * P1 + P4) & M;
  if (i + 4 <= b.length) {
    h = (rotl(h ^ ((le(b, i, 4) * P1) & M), 23n) * P2 + P3) & M;
    i += 4;
  }
  for (; i < b.length; i++) h = (rotl(h ^ ((BigInt(b[i] as number) * P5) & M), 11n) * P1) & M;
  h = ((h ^ (h >> 33n)) * P2) & M;
  h = ((h ^ (h >> 29n)) * P3) & M;
  return h ^ (h >> 32n);
}

describe("xxHash64 (seed 0)", () => {
  it("gives the published XXH64 values", () => {
    // Values from xxHash's own documentation and test suites for seed 0.
    expect(xxHash64("")).toBe(0xef46db3751d8e999n);
    expect(xxHash64("a")).toBe(0xd24ec4f1a98c6e5bn);
    expect(xxHash64("abc")).toBe(0x44bc2cf5ad770999n);
    expect(xxHash64("Nobody inspects the spammish repetition")).toBe(0xfbcea83c8a378bf1n);
  });

  it("matches the bigint reference on every length class (tail bytes, 4-byte word, 8-byte lanes, 32-byte stripes)", () => {
    for (let n = 0; n <= 80; n++) {
      const b = Uint8Array.from({ length: n }, (_, i) => (i * 151 + 7) & 0xff);
      expect(xxHash64(b)).toBe(reference(b));
    }
  });

  it("property: equals the reference for any bytes", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (b) => xxHash64(b) === reference(b)));
  });

  it("property: a string hashes as its UTF-8 bytes, through the scratch buffer and the bigint form alike", () => {
    const out = new Uint32Array(2);
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 200 }), (s) => {
        const bytes = new TextEncoder().encode(s);
        xxHash64StringInto(s, out);
        const fromParts = (BigInt(out[0] as number) << 32n) | BigInt(out[1] as number);
        return fromParts === reference(bytes) && xxHash64(s) === fromParts;
      }),
    );
  });

  it("hashes only the given prefix of a buffer", () => {
    const out = new Uint32Array(2);
    const b = new TextEncoder().encode("127.0.0.1:8080_12 and trailing junk");
    xxHash64Into(b, out, 17);
    expect((BigInt(out[0] as number) << 32n) | BigInt(out[1] as number)).toBe(xxHash64("127.0.0.1:8080_12"));
  });
});
