import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { and, checkBestPractices, type Expr, findOverlaps, fromText, matches, TRUE, value } from "../src/index.js";
import { ALL_SMALL_PARAMS, smallExpr } from "./helpers.js";

const v = (text: string) => ({ name: text, constraints: fromText(text) });

describe("findOverlaps", () => {
  it("agrees with brute force over a small domain, with witnesses that satisfy both variants", () => {
    fc.assert(
      fc.property(fc.array(smallExpr, { minLength: 2, maxLength: 4 }), (exprs) => {
        const variants = exprs.map((constraints, i) => ({ i, constraints }));
        const expected: string[] = [];
        for (let i = 0; i < exprs.length; i++) {
          for (let j = i + 1; j < exprs.length; j++) {
            if (ALL_SMALL_PARAMS.some((p) => matches(exprs[i]!, p) && matches(exprs[j]!, p)))
              expected.push(`${i}-${j}`);
          }
        }
        const found = findOverlaps(variants);
        expect(found.map((o) => `${o.first.i}-${o.second.i}`)).toEqual(expected);
        for (const o of found) {
          expect(matches(o.first.constraints, o.witness) && matches(o.second.constraints, o.witness)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("agrees with brute force on exact-value variants, where it partitions instead of checking every pair", () => {
    const exact = fc
      .array(fc.tuple(fc.constantFrom("a", "b", "c"), fc.constantFrom("x", "y")), { minLength: 0, maxLength: 3 })
      .map((kvs) => kvs.map(([k, val]) => value(k, val)));
    fc.assert(
      fc.property(fc.array(exact, { minLength: 2, maxLength: 8 }), smallExpr, (lists, extra) => {
        const exprs: Expr[] = lists.map((l) => (l.length === 0 ? TRUE : and(l)));
        exprs.push(extra);
        const expected: string[] = [];
        for (let i = 0; i < exprs.length; i++) {
          for (let j = i + 1; j < exprs.length; j++) {
            if (ALL_SMALL_PARAMS.some((p) => matches(exprs[i]!, p) && matches(exprs[j]!, p)))
              expected.push(`${i}-${j}`);
          }
        }
        const found = findOverlaps(exprs.map((constraints, i) => ({ i, constraints })));
        expect(found.map((o) => `${o.first.i}-${o.second.i}`)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it("reports no overlap for the cross product of two keys, even with 10,000 variants", () => {
    const variants = [];
    for (let i = 0; i < 100; i++) for (let j = 0; j < 100; j++) variants.push(v(`env=e${i} && version=v${j}`));
    expect(findOverlaps(variants)).toEqual([]);
    variants.push(v("env=e7 && !exists(version)"), v("env=e7"));
    const found = findOverlaps(variants);
    expect(found.map((o) => [o.first.name, o.second.name])).toContainEqual(["env=e7 && !exists(version)", "env=e7"]);
    expect(found).toHaveLength(1 + 100);
  });
});

describe("checkBestPractices", () => {
  it("is silent when every variant constrains the same keys", () => {
    expect(checkBestPractices([v("env=prod && version=v1"), v("env=test && version=v1")])).toEqual([]);
  });

  it("warns when variants constrain different key sets, naming the minority", () => {
    const a = v("env=prod");
    const b = v("env=test");
    const c = v("env=prod && version=v1");
    const [w, ...rest] = checkBestPractices([a, b, c]);
    expect(rest).toEqual([]);
    expect(w?.kind).toBe("different-key-sets");
    expect(w?.variants).toEqual([c]);
    expect(w?.message).toContain("{env} (2), {env, version} (1)");
  });

  it("warns about a variant no parameter map satisfies", () => {
    const dead = v("env=prod && env=test");
    const warnings = checkBestPractices([dead]);
    expect(warnings).toEqual([
      { kind: "never-matches", message: "no parameter map satisfies env=prod && env=test", variants: [dead] },
    ]);
  });
});
