import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  and,
  canonicalize,
  canonicalText,
  compile,
  equals,
  findWitness,
  fromText,
  matches,
  not,
  TRUE,
  toText,
  value,
} from "../src/index.js";
import { ALL_SMALL_PARAMS, asMap, exprArb, ODD_STRINGS, shuffleDeep, smallExpr, smallParams } from "./helpers.js";

// Keys that a plain object holds through its prototype, or that are special to object literals.
const PROTO_KEYS = ["a", "toString", "__proto__", "constructor"];
const protoExpr = exprArb({ keys: PROTO_KEYS, values: ["x", "1"], maxBound: 3n });
const protoParams = fc
  .array(fc.tuple(fc.constantFrom(...PROTO_KEYS), fc.constantFrom("x", "1", "3")), { maxLength: 4 })
  .map((entries) => Object.fromEntries(entries) as Record<string, string>);

const bigExpr = exprArb({
  keys: ODD_STRINGS,
  values: ODD_STRINGS,
  maxBound: 0xffff_ffff_ffff_ffffn,
  depth: 5,
});

describe("compile agrees with matches", () => {
  it("on plain objects and Maps over the small domain", () => {
    fc.assert(
      fc.property(smallExpr, smallParams, (e, p) => {
        const m = compile(e);
        expect(m(p)).toBe(matches(e, p));
        expect(m(asMap(p))).toBe(matches(e, asMap(p)));
        expect(matches(e, asMap(p))).toBe(matches(e, p));
      }),
      { numRuns: 500 },
    );
  });

  it("on objects whose keys collide with Object.prototype", () => {
    fc.assert(
      fc.property(protoExpr, protoParams, (e, p) => {
        expect(compile(e)(p)).toBe(matches(e, p));
        expect(matches(e, p)).toBe(matches(e, asMap(p)));
      }),
      { numRuns: 300 },
    );
  });

  it("on large integers (the range fast path and the bigint path)", () => {
    const ints = fc.oneof(
      fc.bigInt({ min: 0n, max: 0xffff_ffff_ffff_ffffn }).map(String),
      fc.bigInt({ min: 0n, max: 2n ** 70n }).map(String),
      fc.constantFrom(
        "9007199254740991",
        "9007199254740993",
        "18446744073709551615",
        "18446744073709551616",
        "0",
        "9".repeat(400),
      ),
    );
    const e = exprArb({ keys: ["n"], values: ["1"], maxBound: 0xffff_ffff_ffff_ffffn });
    const e2 = exprArb({ keys: ["n"], values: ["1"], maxBound: 2n ** 54n });
    fc.assert(
      fc.property(fc.oneof(e, e2), ints, (expr, n) => {
        expect(compile(expr)({ n })).toBe(matches(expr, { n }));
      }),
      { numRuns: 500 },
    );
  });
});

describe("text syntax", () => {
  it("fromText(toText(x)) is structurally equal to x", () => {
    fc.assert(
      fc.property(bigExpr, (e) => {
        expect(equals(fromText(toText(e)), e)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("the canonical text parses back to the canonical form", () => {
    fc.assert(
      fc.property(bigExpr, (e) => {
        expect(equals(fromText(canonicalText(e)), canonicalize(e))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe("canonical form", () => {
  it("is invariant under reordering of and/or children", () => {
    fc.assert(
      fc.property(bigExpr, fc.integer(), (e, seed) => {
        const shuffled = shuffleDeep(e, seed);
        expect(canonicalText(shuffled)).toBe(canonicalText(e));
        expect(equals(canonicalize(shuffled), canonicalize(e))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("keeps the meaning and is idempotent", () => {
    fc.assert(
      fc.property(smallExpr, (e) => {
        const c = canonicalize(e);
        expect(equals(canonicalize(c), c)).toBe(true);
        expect(ALL_SMALL_PARAMS.find((p) => matches(c, p) !== matches(e, p))).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });

  it("removes a double negation that appears only once the child is canonical", () => {
    // !(!true && a=x): the `and` holds FALSE, so it is FALSE (`!true`), and the whole is `!!true`, which is TRUE.
    const e = not(and([not(TRUE), value("a", "x")]));
    expect(canonicalText(e)).toBe(canonicalText(TRUE));
    expect(equals(canonicalize(canonicalize(e)), canonicalize(e))).toBe(true);
  });

  it("removes double negation", () => {
    fc.assert(
      fc.property(bigExpr, (e) => {
        expect(canonicalText(not(not(e)))).toBe(canonicalText(e));
      }),
    );
  });
});

describe("not(not(x)) behaves as x", () => {
  it("on every parameter map of the small domain", () => {
    fc.assert(
      fc.property(smallExpr, (e) => {
        const nn = not(not(e));
        const c = compile(nn);
        expect(
          ALL_SMALL_PARAMS.find((p) => matches(nn, p) !== matches(e, p) || c(p) !== matches(e, p)),
        ).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });
});

describe("findWitness agrees with brute force", () => {
  it("finds a witness iff some parameter map satisfies the expression, and the witness does", () => {
    fc.assert(
      fc.property(smallExpr, (e) => {
        const witness = findWitness(e);
        const brute = ALL_SMALL_PARAMS.some((p) => matches(e, p));
        expect(witness !== undefined).toBe(brute);
        if (witness !== undefined) expect(matches(e, witness)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });
});
