import type { HashPolicy } from "@xdskit/xds-client";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileHashPolicies, computeRequestHash, random64 } from "./hash-policy.js";
import { xxHash64 } from "./xx-hash64.js";

const M = (1n << 64n) - 1n;
const rotl1 = (h: bigint) => ((h << 1n) | (h >> 63n)) & M;
const header = (headerName: string, terminal = false, rewrite?: { regex: string; regexSubstitution: string }) =>
  compileHashPolicies([{ type: "header", headerName, terminal, ...rewrite } satisfies HashPolicy])[0]!;
const CHANNEL = 0x0123_4567_89ab_cdefn;

describe("computeRequestHash (A42)", () => {
  it("hashes a header's value with XXH64 and produces nothing when the header is absent", () => {
    const h = new Headers({ "x-user": "alice" });
    expect(computeRequestHash([header("x-user")], h, CHANNEL)).toBe(xxHash64("alice"));
    expect(computeRequestHash([header("x-missing")], h, CHANNEL)).toBeUndefined();
    expect(computeRequestHash([], h, CHANNEL)).toBeUndefined();
  });

  it("combines policies as rotl(hash, 1) ^ next, skipping those that produce nothing", () => {
    const h = new Headers({ a: "1", b: "2" });
    const policies = [header("a"), header("zzz"), header("b"), { kind: "channel_id", terminal: false } as const];
    const expected = rotl1(rotl1(xxHash64("1")) ^ xxHash64("2")) ^ CHANNEL;
    expect(computeRequestHash(policies, h, CHANNEL)).toBe(expected);
  });

  it("stops at a terminal policy once a hash exists, but not at a terminal policy that produced none first", () => {
    const h = new Headers({ a: "1", b: "2" });
    expect(computeRequestHash([header("a", true), header("b")], h, CHANNEL)).toBe(xxHash64("1"));
    expect(computeRequestHash([header("zzz", true), header("b")], h, CHANNEL)).toBe(xxHash64("2"));
  });

  it("never hashes -bin headers, hashes content-type as application/grpc", () => {
    const h = new Headers({ "x-id-bin": "AAEC", "content-type": "application/grpc+proto" });
    expect(computeRequestHash([header("x-id-bin")], h, CHANNEL)).toBeUndefined();
    expect(computeRequestHash([header("content-type")], h, CHANNEL)).toBe(xxHash64("application/grpc"));
    expect(computeRequestHash([{ kind: "channel_id", terminal: false }], h, CHANNEL)).toBe(CHANNEL);
  });

  it("applies regex_rewrite to every match, with RE2 group references", () => {
    const h = new Headers({ "x-path": "/users/42/orders/7" });
    const rewrite = { regex: "/(?P<kind>\\w+)/(\\d+)", regexSubstitution: "[\\1=\\2]" };
    expect(computeRequestHash([header("x-path", false, rewrite)], h, CHANNEL)).toBe(xxHash64("[users=42][orders=7]"));
  });

  it("property: the result is always an unsigned 64-bit value", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 8 }), { maxLength: 6 }),
        fc.bigInt({ min: 0n, max: M }),
        (vals, id) => {
          const h = new Headers(vals.map((v, i) => [`h${i}`, v] as [string, string]));
          const policies = vals.map((_, i) => header(`h${i}`));
          const r = computeRequestHash([...policies, { kind: "channel_id", terminal: false }], h, id);
          return r !== undefined && r >= 0n && r <= M;
        },
      ),
    );
  });
});

describe("compileHashPolicies", () => {
  it("compiles a route's list once and returns the same array for it afterwards", () => {
    const list: readonly HashPolicy[] = Object.freeze([{ type: "header", headerName: "X-A", terminal: false }]);
    const first = compileHashPolicies(list);
    expect(first).toEqual([{ kind: "header", headerName: "x-a", rewrite: undefined, terminal: false }]);
    expect(compileHashPolicies(list)).toBe(first);
  });
});

describe("regex_rewrite (RE2 GlobalReplace)", () => {
  it("takes $ in a substitution literally and \\0 as the whole match", () => {
    const h = new Headers({ "x-id": "ab-ab" });
    const rewrite = { regex: "ab", regexSubstitution: "$&[\\0]$1" };
    expect(computeRequestHash([header("x-id", false, rewrite)], h, CHANNEL)).toBe(xxHash64("$&[ab]$1-$&[ab]$1"));
  });

  it("rewrites with a pattern that backtracks exponentially in JavaScript, in one pass over the value", () => {
    // RegExp takes minutes on `^(a+)+$` against 40 `a` and a `!` (each extra `a` doubles it); RE2 is linear.
    const h = new Headers({ "x-id": `${"a".repeat(40)}!` });
    const rewrite = { regex: "(a+)+$", regexSubstitution: "x" };
    expect(computeRequestHash([header("x-id", false, rewrite)], h, CHANNEL)).toBe(xxHash64(`${"a".repeat(40)}!`));
    const matching = new Headers({ "x-id": "a".repeat(40) });
    expect(computeRequestHash([header("x-id", false, rewrite)], matching, CHANNEL)).toBe(xxHash64("x"));
  });
});

describe("random64", () => {
  it("spans both halves of the 64-bit range", () => {
    const values = [0, 0.5, 0.999999999];
    let i = 0;
    expect(random64(() => values[i++ % 3] as number)).toBe(0x8000_0000n);
    expect(random64(() => 0.999999999)).toBe(((0xffff_fffbn << 32n) | 0xffff_fffbn) & M);
  });
});
