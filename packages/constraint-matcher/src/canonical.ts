import { compareStrings, type Expr, FALSE, type IntRange, TRUE } from "./expr.js";
import { toText } from "./text-print.js";

interface Canon {
  readonly expr: Expr;
  readonly text: string;
}

/**
 * The canonical form of `expr`, with the same meaning on every parameter map:
 * - nested and/or of the same kind are flattened, children deduplicated and sorted by their canonical text;
 * - double negations are removed;
 * - `TRUE` children are dropped from `and` and absorb an `or`; `FALSE` (`!true`) children do the converse;
 * - a range's intervals are sorted and overlapping or adjacent ones merged.
 * Two expressions that differ only in the order of and/or children have equal canonical forms.
 * Invariant: `canonicalize(canonicalize(x))` equals `canonicalize(x)`.
 */
export function canonicalize(expr: Expr): Expr {
  return canon(expr).expr;
}

/** `toText(canonicalize(expr))`: a stable cache key, equal for expressions equal up to the rules above. */
export function canonicalText(expr: Expr): string {
  return canon(expr).text;
}

const TRUE_CANON: Canon = { expr: TRUE, text: toText(TRUE) };
const FALSE_CANON: Canon = { expr: FALSE, text: toText(FALSE) };

function canon(expr: Expr): Canon {
  switch (expr.kind) {
    case "true":
      return TRUE_CANON;
    case "value":
    case "exists":
      return { expr, text: toText(expr) };
    case "range": {
      const merged = mergeRanges(expr.ranges);
      const out = Object.freeze({ kind: "range" as const, key: expr.key, ranges: merged });
      return { expr: out, text: toText(out) };
    }
    case "not": {
      const child = canon(expr.child);
      // The child's canonical form may itself be a negation (`!(!true && a=x)` is `!!true`): remove it here too.
      if (child.expr.kind === "not") return canon(child.expr.child);
      const out = Object.freeze({ kind: "not" as const, child: child.expr });
      return { expr: out, text: toText(out) };
    }
    case "and":
    case "or":
      return canonJunction(expr.kind, expr.children);
  }
}

function canonJunction(kind: "and" | "or", children: readonly Expr[]): Canon {
  // For `and`, TRUE is the identity and FALSE absorbs; for `or`, the converse.
  const identity = kind === "and" ? TRUE_CANON : FALSE_CANON;
  const absorbing = kind === "and" ? FALSE_CANON : TRUE_CANON;
  const byText = new Map<string, Canon>();
  const add = (c: Canon): boolean => {
    if (c.text === absorbing.text) return false;
    if (c.text !== identity.text) byText.set(c.text, c);
    return true;
  };
  for (const child of children) {
    const c = canon(child);
    if (c.expr.kind === kind) {
      // The canonical child is already flat and sorted: its children are canonical too.
      for (const grandchild of c.expr.children) if (!add(canon(grandchild))) return absorbing;
    } else if (!add(c)) {
      return absorbing;
    }
  }
  const sorted = [...byText.values()].sort((a, b) => compareStrings(a.text, b.text));
  if (sorted.length === 0) return identity;
  if (sorted.length === 1) return sorted[0]!;
  const out = Object.freeze({ kind, children: Object.freeze(sorted.map((c) => c.expr)) });
  return { expr: out, text: toText(out) };
}

function mergeRanges(ranges: readonly IntRange[]): readonly IntRange[] {
  const sorted = [...ranges].sort((a, b) => (a.min < b.min ? -1 : a.min > b.min ? 1 : 0));
  const out: { min: bigint; max: bigint }[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && r.min <= last.max + 1n) {
      if (r.max > last.max) last.max = r.max;
    } else {
      out.push({ min: r.min, max: r.max });
    }
  }
  return Object.freeze(out.map((r) => Object.freeze(r)));
}
