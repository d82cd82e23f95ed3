import type { Expr } from "./expr.js";
import { inRanges, lookup, type Params } from "./params.js";

/**
 * Whether `params` satisfy `expr` (the merged API's semantics; the draft dialect's absent-key rule is already part
 * of the expression `fromDraft` builds). A straightforward interpreter: `compile` gives the same answers faster.
 */
export function matches(expr: Expr, params: Params): boolean {
  switch (expr.kind) {
    case "true":
      return true;
    case "value":
      return lookup(params, expr.key) === expr.value;
    case "exists":
      return lookup(params, expr.key) !== undefined;
    case "range": {
      const v = lookup(params, expr.key);
      return v !== undefined && inRanges(v, expr.ranges);
    }
    case "not":
      return !matches(expr.child, params);
    case "and":
      for (const c of expr.children) if (!matches(c, params)) return false;
      return true;
    case "or":
      for (const c of expr.children) if (matches(c, params)) return true;
      return false;
  }
}
