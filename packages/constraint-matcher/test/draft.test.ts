import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compile,
  type DraftConstraint,
  type DraftConstraints,
  fromDraft,
  matches,
  selectAllDraftVariants,
  selectDraftVariant,
  toText,
} from "../src/index.js";
import { ALL_SMALL_PARAMS, SMALL_KEYS } from "./helpers.js";

/** The draft's rule, written directly: per key, absent matches; present must meet every constraint (or, with
 * invert, fail to meet them all). */
function draftReference(draft: DraftConstraints, params: Record<string, string>): boolean {
  return Object.entries(draft).every(([key, kc]) => {
    if (!Object.hasOwn(params, key)) return true;
    const v = params[key]!;
    const all = kc.constraints.every((c) => {
      if ("value" in c) return v === c.value;
      if (!/^(0|[1-9][0-9]*)$/.test(v)) return false;
      const n = BigInt(v);
      return c.integer_range_list.some((r) => {
        const range = "range" in r ? r.range : r;
        return n >= BigInt(range.min_value ?? 0) && n <= BigInt(range.max_value ?? 2n ** 64n - 1n);
      });
    });
    return kc.invert === true ? !all : all;
  });
}

const bound = fc.integer({ min: 0, max: 3 });
const draftConstraint: fc.Arbitrary<DraftConstraint> = fc.oneof(
  fc.constantFrom("x", "y", "0", "1", "2").map((value) => ({ value })),
  fc
    .array(
      fc.oneof(
        fc.tuple(bound, bound).map(([a, b]) => ({ min_value: Math.min(a, b), max_value: Math.max(a, b) })),
        bound.map((a) => ({ range: { min_value: BigInt(a) } })),
        bound.map((a) => ({ max_value: String(a) })),
      ),
      { minLength: 1, maxLength: 2 },
    )
    .map((integer_range_list) => ({ integer_range_list })),
);
const draftArb: fc.Arbitrary<DraftConstraints> = fc.dictionary(
  fc.constantFrom(...SMALL_KEYS),
  fc.record(
    { constraints: fc.array(draftConstraint, { minLength: 1, maxLength: 2 }), invert: fc.boolean() },
    { requiredKeys: ["constraints"] },
  ),
  { maxKeys: 3 },
);

describe("fromDraft", () => {
  it("means what the draft says on every parameter map of a small domain (property)", () => {
    fc.assert(
      fc.property(draftArb, (draft) => {
        const e = fromDraft(draft);
        const m = compile(e);
        const bad = ALL_SMALL_PARAMS.find((p) => matches(e, p) !== draftReference(draft, p) || m(p) !== matches(e, p));
        expect(bad).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  }, 60_000); // CPU-bound: 5 s in npm test with the machine busy

  it("writes each key as !exists(key) || constraints, keys sorted", () => {
    const e = fromDraft({
      version: { constraints: [{ value: "v1" }], invert: true },
      env: { constraints: [{ value: "prod" }, { integer_range_list: [{ range: { min_value: 0, max_value: 5 } }] }] },
    });
    expect(toText(e)).toBe("(!exists(env) || (env=prod && env in [0..5])) && (!exists(version) || !version=v1)");
    expect(toText(fromDraft({}))).toBe("true");
  });
});

describe("selectDraftVariant", () => {
  it("prefers the largest value for each range-constrained key, in key order", () => {
    const constraints = fromDraft({
      a: { constraints: [{ integer_range_list: [{ max_value: 10 }] }] },
      b: { constraints: [{ integer_range_list: [{ max_value: 10 }] }] },
    });
    const vs = [
      { parameters: { a: "3", b: "9" }, value: "a3b9" },
      { parameters: { a: "4", b: "1" }, value: "a4b1" },
      { parameters: { a: "4", b: "2" }, value: "a4b2" },
      { parameters: { b: "10" }, value: "b10" },
      { parameters: { a: "11" }, value: "a11" },
    ];
    expect(selectAllDraftVariants(constraints, vs).map((v) => v.value)).toEqual(["a4b2", "a4b1", "a3b9", "b10"]);
    const s = selectDraftVariant(constraints, vs);
    expect(s?.variant.value).toBe("a4b2");
    expect(s?.ambiguous.map((v) => v.value)).toEqual(["a4b1", "a3b9", "b10"]);
    expect(selectDraftVariant(constraints, [vs[4]!])).toBeUndefined();
  });

  it("then prefers variants carrying more constrained keys, then the smaller parameter text", () => {
    const constraints = fromDraft({
      env: { constraints: [{ value: "prod" }] },
      zone: { constraints: [{ value: "a" }] },
    });
    const vs = [
      { parameters: new Map([["other", "1"]]), value: "none" },
      { parameters: { env: "prod", x: "2" }, value: "env-x2" },
      { parameters: { env: "prod", x: "1" }, value: "env-x1" },
      { parameters: { env: "prod", zone: "a" }, value: "both" },
    ];
    expect(selectAllDraftVariants(constraints, vs).map((v) => v.value)).toEqual(["both", "env-x1", "env-x2", "none"]);
  });
});
