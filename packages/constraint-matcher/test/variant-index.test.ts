import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  and,
  canonicalText,
  createVariantIndex,
  type Expr,
  fromText,
  matches,
  type Params,
  specificity,
  TRUE,
  type Variant,
  value,
} from "../src/index.js";
import { asMap, smallExpr, smallParams } from "./helpers.js";

/** The reference: every variant evaluated, sorted by specificity then canonical text. */
function linearScan(variants: ReadonlyMap<string, { e: Expr; name: number }>, params: Params) {
  return [...variants.entries()]
    .filter(([, v]) => matches(v.e, params))
    .map(([text, v]) => ({ text, name: v.name, spec: specificity(v.e) }))
    .sort((a, b) => b.spec - a.spec || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0))
    .map((r) => r.name);
}

const names = (vs: readonly Variant<number>[]) => vs.map((x) => x.value);

// Exact-value variants over varying key sets (the indexed path), mixed with arbitrary ones (the scan path).
const exactExpr = fc
  .uniqueArray(fc.tuple(fc.constantFrom("a", "b", "c"), fc.constantFrom("x", "y", "0", "1")), {
    maxLength: 3,
    selector: ([k]) => k,
  })
  .map((kvs): Expr => (kvs.length === 0 ? TRUE : and(kvs.map(([k, v]) => value(k, v)))));
const op = fc.oneof(
  fc.record({ kind: fc.constant("add" as const), e: fc.oneof(exactExpr, exactExpr, smallExpr) }),
  fc.record({ kind: fc.constant("remove" as const), e: fc.oneof(exactExpr, smallExpr) }),
);

describe("createVariantIndex", () => {
  it("selects exactly what a linear scan selects, ambiguity included (property)", () => {
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 25 }),
        fc.array(smallParams, { minLength: 1, maxLength: 10 }),
        (ops, ps) => {
          const index = createVariantIndex<number>();
          const reference = new Map<string, { e: Expr; name: number }>();
          ops.forEach((o, name) => {
            const text = canonicalText(o.e);
            if (o.kind === "add") {
              index.add(o.e, name);
              reference.set(text, { e: o.e, name });
            } else {
              expect(index.remove(o.e)).toBe(reference.delete(text));
            }
          });
          expect(index.size).toBe(reference.size);
          for (const p of ps) {
            const expected = linearScan(reference, p);
            expect(names(index.selectAll(p))).toEqual(expected);
            expect(names(index.selectAll(asMap(p)))).toEqual(expected);
            const s = index.select(p);
            if (expected.length === 0) expect(s).toBeUndefined();
            else expect([s?.variant.value, ...names(s?.ambiguous ?? [])]).toEqual(expected);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("serves exact-value variants by hash lookup and the rest by scan", () => {
    const index = createVariantIndex<string>();
    index.add(fromText("env=prod && version=v1"), "a");
    index.add(fromText("version=v2 && env=prod"), "b");
    index.add(fromText("env=test"), "c");
    index.add(TRUE, "d");
    index.add(fromText("env=prod && !exists(canary)"), "e");
    expect(index.stats()).toEqual({ variants: 5, indexed: 4, scanned: 1, keySets: 3 });
    expect(index.select({ env: "prod", version: "v2" })?.variant.value).toBe("b");
    expect(names2(index.selectAll({ env: "prod", version: "v2" }))).toEqual(["b", "e", "d"]);
    index.remove(fromText("env=prod && version=v2"));
    index.remove(fromText("env=test"));
    expect(index.stats()).toEqual({ variants: 3, indexed: 2, scanned: 1, keySets: 2 });
  });

  it("does not confuse key tuples that concatenate alike", () => {
    const index = createVariantIndex<string>();
    index.add(fromText('a="x1:y" && b=z'), "first");
    index.add(fromText('a=x && b="1:yz"'), "second");
    index.add(fromText('"2:ab1:c"=q'), "third");
    expect(names2(index.selectAll({ a: "x1:y", b: "z" }))).toEqual(["first"]);
    expect(names2(index.selectAll({ a: "x", b: "1:yz" }))).toEqual(["second"]);
    expect(names2(index.selectAll({ ab: "q", c: "q", "2:ab1:c": "q" }))).toEqual(["third"]);
  });

  it("selects among 10,000 exact-value variants with one lookup per key set", () => {
    const index = createVariantIndex<number>();
    for (let i = 0; i < 10_000; i++) index.add(fromText(`shard_id=s${i} && env=prod`), i);
    expect(index.stats()).toEqual({ variants: 10_000, indexed: 10_000, scanned: 0, keySets: 1 });
    expect(index.select({ env: "prod", shard_id: "s4242" })).toMatchObject({ variant: { value: 4242 }, ambiguous: [] });
    expect(index.select({ env: "test", shard_id: "s4242" })).toBeUndefined();
    expect(index.variants()).toHaveLength(10_000);
    expect(index.get(fromText("env=prod && shard_id=s7"))?.value).toBe(7);
  });
});

function names2(vs: readonly Variant<string>[]) {
  return vs.map((x) => x.value);
}
