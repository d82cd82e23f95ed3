// Shared by the tests: expression generators (fast-check) and brute-force oracles over small finite domains.
import fc from "fast-check";
import { and, type Expr, exists, not, or, type Params, range, TRUE, value } from "../src/index.js";

/** Keys and values of the small domain the brute-force oracles enumerate. */
export const SMALL_KEYS = ["a", "b", "c"] as const;
export const SMALL_VALUES = ["x", "y", "0", "1", "2"] as const;
/** Every value a key can take, up to equivalence, for expressions built from SMALL_VALUES and ranges in 0..3:
 * the constants, integers outside every range (4, 99), a non-canonical integer (05) and another string (z). */
export const BRUTE_VALUES = [...SMALL_VALUES, "3", "4", "99", "05", "z", ""] as const;

/** Keys and values that exercise quoting: reserved words, spaces, quotes, escapes, the empty string. */
export const ODD_STRINGS = ["env", "x.y", "odd key", "true", "in", "exists", "", 'q"uote', "back\\slash", "tab\tnl\n"];

interface ExprOptions {
  readonly keys: readonly string[];
  readonly values: readonly string[];
  readonly maxBound: bigint;
  readonly withRanges?: boolean;
  readonly withTrue?: boolean;
  readonly depth?: number;
}

/** Random expressions over the given keys and values; ranges have bounds in 0..maxBound. */
export function exprArb(options: ExprOptions): fc.Arbitrary<Expr> {
  const key = fc.constantFrom(...options.keys);
  const val = fc.constantFrom(...options.values);
  const bound = fc.bigInt({ min: 0n, max: options.maxBound });
  const oneRange = fc.tuple(bound, bound).map(([x, y]): [bigint, bigint] => (x <= y ? [x, y] : [y, x]));
  const leaves: fc.Arbitrary<Expr>[] = [fc.tuple(key, val).map(([k, v]) => value(k, v)), key.map((k) => exists(k))];
  if (options.withRanges !== false) {
    leaves.push(fc.tuple(key, fc.array(oneRange, { minLength: 1, maxLength: 3 })).map(([k, rs]) => range(k, ...rs)));
  }
  if (options.withTrue !== false) leaves.push(fc.constant(TRUE));
  const { tree } = fc.letrec<{ tree: Expr }>((tie) => ({
    tree: fc.oneof(
      { maxDepth: options.depth ?? 4, depthIdentifier: "expr" },
      ...leaves,
      fc.array(tie("tree"), { minLength: 2, maxLength: 3 }).map((cs) => and(cs)),
      fc.array(tie("tree"), { minLength: 2, maxLength: 3 }).map((cs) => or(cs)),
      tie("tree").map((c) => not(c)),
    ),
  }));
  return tree;
}

/** Expressions over the small domain (complete for brute force with BRUTE_VALUES). */
export const smallExpr = exprArb({ keys: SMALL_KEYS, values: SMALL_VALUES, maxBound: 3n });

/** Parameter maps over the small domain, as a plain object. */
export const smallParams: fc.Arbitrary<Record<string, string>> = fc
  .tuple(...SMALL_KEYS.map(() => fc.option(fc.constantFrom(...BRUTE_VALUES), { nil: undefined })))
  .map((vs) => {
    const out: Record<string, string> = {};
    vs.forEach((v, i) => {
      if (v !== undefined) out[SMALL_KEYS[i]!] = v;
    });
    return out;
  });

/** Every parameter map over `keys` with each key absent or one of `values`. */
export function* allParams(keys: readonly string[], values: readonly string[]): Generator<Record<string, string>> {
  const choices = [undefined, ...values];
  const idx = keys.map(() => 0);
  for (;;) {
    const p: Record<string, string> = {};
    keys.forEach((k, i) => {
      const v = choices[idx[i]!];
      if (v !== undefined) p[k] = v;
    });
    yield p;
    let i = 0;
    while (i < keys.length && ++idx[i]! === choices.length) idx[i++] = 0;
    if (i === keys.length) return;
  }
}

/** The brute-force parameter maps of the small domain. */
export const ALL_SMALL_PARAMS = [...allParams(SMALL_KEYS, BRUTE_VALUES)];

/** The same parameters as a Map. */
export function asMap(p: Record<string, string>): Params {
  return new Map(Object.entries(p));
}

/** A deterministic reordering of every and/or's children (a rotation then a reversal picked by `seed`). */
export function shuffleDeep(e: Expr, seed: number): Expr {
  switch (e.kind) {
    case "not":
      return not(shuffleDeep(e.child, seed * 7 + 1));
    case "and":
    case "or": {
      const cs = e.children.map((c, i) => shuffleDeep(c, seed * 31 + i));
      const r = Math.abs(seed) % cs.length;
      const rotated = [...cs.slice(r), ...cs.slice(0, r)];
      if (seed % 2 === 0) rotated.reverse();
      return e.kind === "and" ? and(rotated) : or(rotated);
    }
    default:
      return e;
  }
}
