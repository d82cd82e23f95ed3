import { canonicalText } from "./canonical.js";
import { compile } from "./compile.js";
import { and, compareStrings, type Expr, keysOf, TRUE, value } from "./expr.js";
import { lookup, type Params, parseUint64 } from "./params.js";
import type { Selection } from "./variant-index.js";

/** A variant in the draft's direction: the resource carries parameters, the subscriber sends constraints. */
export interface DraftVariant<T> {
  readonly parameters: Params;
  readonly value: T;
}

/**
 * Picks among `candidates` (resource variants with dynamic parameters) the one a subscriber's draft-dialect
 * `constraints` (from `fromDraft`) prefer. Of the candidates whose parameters satisfy the constraints:
 * 1. "the largest matching value is preferred": for each key constrained by a range, in sorted key order, the
 *    larger integer value wins (a missing or non-integer value loses to any integer);
 * 2. then the candidate carrying more of the constrained keys (its match is less vacuous);
 * 3. then the smaller canonical text of the parameters (`a=1 && b=2`).
 * Equal parameters keep their input order. Every other match is returned in `ambiguous`, in the same order.
 */
export function selectDraftVariant<V extends DraftVariant<unknown>>(
  constraints: Expr,
  candidates: readonly V[],
): Selection<V> | undefined {
  const all = selectAllDraftVariants(constraints, candidates);
  if (all.length === 0) return undefined;
  return { variant: all[0]!, ambiguous: all.slice(1) };
}

/** Every candidate whose parameters satisfy `constraints`, in the preference order of `selectDraftVariant`. */
export function selectAllDraftVariants<V extends DraftVariant<unknown>>(
  constraints: Expr,
  candidates: readonly V[],
): V[] {
  const matcher = compile(constraints);
  const keys = keysOf(constraints);
  const rangeKeys = rangeKeysOf(constraints);
  const ranked = candidates
    .filter((c) => matcher(c.parameters))
    .map((c) => ({
      candidate: c,
      integers: rangeKeys.map((k) => integerOf(c.parameters, k)),
      present: keys.filter((k) => lookup(c.parameters, k) !== undefined).length,
      text: parametersText(c.parameters),
    }));
  ranked.sort((a, b) => {
    for (let i = 0; i < rangeKeys.length; i++) {
      const x = a.integers[i]!;
      const y = b.integers[i]!;
      if (x !== y) return x > y ? -1 : 1;
    }
    return b.present - a.present || compareStrings(a.text, b.text);
  });
  return ranked.map((r) => r.candidate);
}

function integerOf(params: Params, key: string): bigint {
  const v = lookup(params, key);
  return (v === undefined ? undefined : parseUint64(v)) ?? -1n;
}

function rangeKeysOf(expr: Expr): string[] {
  const keys = new Set<string>();
  const walk = (e: Expr): void => {
    if (e.kind === "range") keys.add(e.key);
    else if (e.kind === "not") walk(e.child);
    else if (e.kind === "and" || e.kind === "or") for (const c of e.children) walk(c);
  };
  walk(expr);
  return [...keys].sort(compareStrings);
}

/** The canonical text of a parameter map read as exact-value constraints: `TRUE` prints `true`. */
export function parametersText(params: Params): string {
  const entries = params instanceof Map ? [...params.entries()] : Object.entries(params);
  const values = entries.filter(([, v]) => typeof v === "string").map(([k, v]) => value(k, v));
  return canonicalText(values.length === 0 ? TRUE : and(values));
}
