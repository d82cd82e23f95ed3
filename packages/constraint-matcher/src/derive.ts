import { ConstraintError } from "./constraint-error.js";
import type { Expr } from "./expr.js";
import { toText } from "./text-print.js";

/**
 * The parameters a DPDS client sends so that it gets the variant `expr` describes
 * (docs/decisions.md#the-dpds-resource): a single `key=value`, or a top-level `and` of them, becomes
 * `{ key: value, ... }`; `TRUE` (no constraints) becomes `{}`. Any other shape (`exists`, `or`, `not`, a range,
 * nesting) cannot be expressed as parameters, and neither can two different values for one key: both are a
 * `ConstraintError` whose path names the offending part in the merged API's field names, e.g.
 * `and_constraints.constraints[1]: exists(canary) ...`.
 */
export function deriveParameters(expr: Expr): Record<string, string> {
  const out: Record<string, string> = {};
  if (expr.kind === "true") return out;
  const parts = expr.kind === "and" ? expr.children : [expr];
  parts.forEach((part, i) => {
    const path = expr.kind === "and" ? `and_constraints.constraints[${i}]` : "";
    if (part.kind !== "value") {
      throw new ConstraintError(
        `${toText(part)} cannot become a parameter: only key=value, alone or in a top-level and, can`,
        { path: path === "" ? fieldOf(part) : path },
      );
    }
    const previous = Object.hasOwn(out, part.key) ? out[part.key] : undefined;
    if (previous !== undefined && previous !== part.value) {
      throw new ConstraintError(
        `conflicting values for key ${JSON.stringify(part.key)}: ${JSON.stringify(previous)} and ${JSON.stringify(part.value)}`,
        { path },
      );
    }
    Object.defineProperty(out, part.key, { value: part.value, enumerable: true, writable: true, configurable: true });
  });
  return out;
}

/** The merged API field holding `e` at the top level, for error paths. */
function fieldOf(e: Expr): string {
  switch (e.kind) {
    case "or":
      return "or_constraints";
    case "not":
      return "not_constraints";
    case "and":
      return "and_constraints";
    default:
      return "constraint";
  }
}
