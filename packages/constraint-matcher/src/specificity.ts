import { canonicalize } from "./canonical.js";
import { compareStrings, type Expr } from "./expr.js";

/**
 * How specific a variant's constraints are (docs/decisions.md#ambiguous-variants): the number of distinct keys
 * that appear in a positive literal, i.e. a `value`, `exists` or `range` reached through an even number of
 * negations, counted on the canonical form so that every spelling of one variant's identity scores the same
 * (`a=1 || true` is `true`). `TRUE` scores 0; `env=prod && version=v1` scores 2; `!exists(canary)` scores 0;
 * `env=prod || region=eu` scores 2.
 */
export function specificity(expr: Expr): number {
  return positiveKeys(canonicalize(expr));
}

/** The count of `specificity`, on an expression already in canonical form. */
export function positiveKeys(expr: Expr): number {
  const keys = new Set<string>();
  const walk = (e: Expr, positive: boolean): void => {
    switch (e.kind) {
      case "true":
        return;
      case "value":
      case "exists":
      case "range":
        if (positive) keys.add(e.key);
        return;
      case "not":
        walk(e.child, !positive);
        return;
      case "and":
      case "or":
        for (const c of e.children) walk(c, positive);
    }
  };
  walk(expr, true);
  return keys.size;
}

/** What the preference order looks at: a variant's specificity and the canonical text of its constraints. */
export interface Ranked {
  readonly specificity: number;
  readonly canonicalText: string;
}

/**
 * The preference order among matching variants: higher specificity first, then the smaller canonical text
 * (code-unit order). Total on variants with distinct canonical texts, which is every variant of one index.
 */
export function comparePreference(a: Ranked, b: Ranked): number {
  return b.specificity - a.specificity || compareStrings(a.canonicalText, b.canonicalText);
}
