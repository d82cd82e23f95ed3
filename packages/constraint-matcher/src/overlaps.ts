import { canonicalize, canonicalText } from "./canonical.js";
import { and, compareStrings, type Expr, keysOf } from "./expr.js";
import { findWitness } from "./satisfy.js";

/** Two variants that one parameter map (`witness`) satisfies both: TP2 says control planes must not accept this. */
export interface Overlap<V> {
  /** The variant that comes first in the input. */
  readonly first: V;
  readonly second: V;
  /** A parameter map matching both (keys not listed are absent). */
  readonly witness: Readonly<Record<string, string>>;
}

interface Item<V> {
  readonly index: number;
  readonly variant: V;
  readonly expr: Expr;
  /** Keys every matching parameter map must hold with exactly this value. */
  readonly required: ReadonlyMap<string, string>;
}

/**
 * Every pair of variants that some parameter map satisfies both, in input order. Exact: each reported pair has a
 * witness, and a pair is left out only when no parameter map satisfies both (see `findWitness`). Variants pinned to
 * different values of one key are separated by partitioning on that key, so the common exact-value case costs
 * about linear time rather than one check per pair.
 */
export function findOverlaps<V extends { readonly constraints: Expr }>(variants: readonly V[]): Overlap<V>[] {
  const items = variants.map((variant, index): Item<V> => {
    const expr = canonicalize(variant.constraints);
    return { index, variant, expr, required: requiredValues(expr) };
  });
  const found: { i: number; j: number; overlap: Overlap<V> }[] = [];
  const check = (a: Item<V>, b: Item<V>): void => {
    const [x, y] = a.index < b.index ? [a, b] : [b, a];
    for (const [k, v] of x.required) {
      const w = y.required.get(k);
      if (w !== undefined && w !== v) return;
    }
    const witness = findWitness(and([x.expr, y.expr]));
    if (witness === undefined) return;
    found.push({ i: x.index, j: y.index, overlap: { first: x.variant, second: y.variant, witness } });
  };
  partition(items, new Set(), check);
  found.sort((p, q) => p.i - q.i || p.j - q.j);
  return found.map((f) => f.overlap);
}

/**
 * Calls `check` once for every pair that is not trivially disjoint. It splits on the key pinned by the most items:
 * items pinned to different values of it cannot overlap; items not pinned on it are checked against all.
 */
function partition<V>(items: readonly Item<V>[], used: ReadonlySet<string>, check: (a: Item<V>, b: Item<V>) => void) {
  if (items.length < 2) return;
  const counts = new Map<string, number>();
  for (const it of items) for (const k of it.required.keys()) if (!used.has(k)) counts.set(k, (counts.get(k) ?? 0) + 1);
  let best: string | undefined;
  for (const [k, n] of counts) if (n >= 2 && (best === undefined || n > counts.get(best)!)) best = k;
  if (best === undefined) {
    for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) check(items[i]!, items[j]!);
    return;
  }
  const groups = new Map<string, Item<V>[]>();
  const free: Item<V>[] = [];
  for (const it of items) {
    const v = it.required.get(best);
    if (v === undefined) {
      free.push(it);
      continue;
    }
    const group = groups.get(v);
    if (group === undefined) groups.set(v, [it]);
    else group.push(it);
  }
  const nextUsed = new Set(used).add(best);
  for (const group of groups.values()) partition(group, nextUsed, check);
  for (let i = 0; i < free.length; i++) {
    for (let j = i + 1; j < free.length; j++) check(free[i]!, free[j]!);
    for (const group of groups.values()) for (const it of group) check(free[i]!, it);
  }
}

/** `k=v` literals that are the whole canonical expression or direct children of its top-level `and`. */
function requiredValues(canonical: Expr): Map<string, string> {
  const out = new Map<string, string>();
  const literals = canonical.kind === "and" ? canonical.children : [canonical];
  for (const c of literals) if (c.kind === "value" && !out.has(c.key)) out.set(c.key, c.value);
  return out;
}

/** A warning about a set of variants that is legal but invites ambiguity or dead configuration. */
export interface BestPracticeWarning<V> {
  /**
   * `different-key-sets`: TP2's "every variant of a resource should constrain the same set of keys" is broken;
   * `never-matches`: no parameter map satisfies the variant's constraints.
   */
  readonly kind: "different-key-sets" | "never-matches";
  readonly message: string;
  /** The variants concerned: those outside the most common key set, or the one that never matches. */
  readonly variants: readonly V[];
}

/** Warnings for a resource's variants; an empty list when they follow TP2's best practices. */
export function checkBestPractices<V extends { readonly constraints: Expr }>(
  variants: readonly V[],
): BestPracticeWarning<V>[] {
  const warnings: BestPracticeWarning<V>[] = [];
  const bySet = new Map<string, V[]>();
  for (const v of variants) {
    const label = `{${keysOf(v.constraints).join(", ")}}`;
    const same = bySet.get(label);
    if (same === undefined) bySet.set(label, [v]);
    else same.push(v);
  }
  if (bySet.size > 1) {
    const sets = [...bySet.entries()].sort((a, b) => b[1].length - a[1].length || compareStrings(a[0], b[0]));
    const summary = sets.map(([label, vs]) => `${label} (${vs.length})`).join(", ");
    warnings.push({
      kind: "different-key-sets",
      message: `variants constrain different key sets: ${summary}; every variant should constrain the same keys`,
      variants: sets.slice(1).flatMap(([, vs]) => vs),
    });
  }
  for (const v of variants) {
    if (findWitness(v.constraints) === undefined) {
      const message = `no parameter map satisfies ${canonicalText(v.constraints)}`;
      warnings.push({ kind: "never-matches", message, variants: [v] });
    }
  }
  return warnings;
}
