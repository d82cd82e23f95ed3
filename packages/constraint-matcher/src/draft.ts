import { ConstraintError } from "./constraint-error.js";
import { and, compareStrings, type Expr, exists, MAX_UINT64, not, or, range, TRUE, value } from "./expr.js";

/** A uint64 as the draft's JSON or textproto gives it: a bigint, a safe non-negative integer, or decimal digits. */
export type DraftUint = bigint | number | string;

/** `Range{uint64 min_value = 1; uint64 max_value = 2}`: at least one bound set; min defaults to 0, max to 2^64-1. */
export interface DraftRange {
  readonly min_value?: DraftUint;
  readonly max_value?: DraftUint;
}

/** `Constraint`: a oneof of `value` and `integer_range_list` (a list of ranges, bare or as `{ range: {...} }`). */
export type DraftConstraint =
  | { readonly value: string }
  | { readonly integer_range_list: readonly (DraftRange | { readonly range: DraftRange })[] };

/** `KeyConstraints`: every constraint must hold; `invert` (in the draft's examples only) negates them. */
export interface DraftKeyConstraints {
  readonly constraints: readonly DraftConstraint[];
  readonly invert?: boolean;
}

/** The draft's `DynamicParameterConstraints.key_constraints` map. */
export type DraftConstraints = Readonly<Record<string, DraftKeyConstraints>>;

/**
 * The expression of the TP2 draft's client-sent constraints, evaluated against a resource variant's dynamic
 * parameters. Each key becomes `!exists(key) || C`, where `C` is the `and` of its constraints (negated when
 * `invert` is set): the draft's rule that "a key [that] has a constraint here but is not present on the resource
 * ... will match, regardless of what the constraint says". Keys are combined with `and` in sorted order; an empty
 * map is `TRUE`. Errors (`ConstraintError`) name the path, e.g. `key_constraints["shard"].constraints[0]`.
 */
export function fromDraft(draft: DraftConstraints): Expr {
  if (typeof draft !== "object" || draft === null) throw new ConstraintError("draft constraints must be an object");
  const keys = Object.keys(draft).sort(compareStrings);
  if (keys.length === 0) return TRUE;
  return and(keys.map((key) => keyExpr(key, draft[key]!, `key_constraints[${JSON.stringify(key)}]`)));
}

function keyExpr(key: string, kc: DraftKeyConstraints, path: string): Expr {
  if (typeof kc !== "object" || kc === null || !Array.isArray(kc.constraints)) {
    throw new ConstraintError("expected { constraints: [...], invert? }", { path });
  }
  if (kc.constraints.length === 0) throw new ConstraintError("empty list", { path: `${path}.constraints` });
  if (kc.invert !== undefined && typeof kc.invert !== "boolean") {
    throw new ConstraintError("invert must be a boolean", { path: `${path}.invert` });
  }
  const parts = kc.constraints.map((c, i) => constraintExpr(key, c, `${path}.constraints[${i}]`));
  const all = and(parts);
  return or([not(exists(key)), kc.invert === true ? not(all) : all]);
}

function constraintExpr(key: string, c: DraftConstraint, path: string): Expr {
  const hasValue = typeof c === "object" && c !== null && "value" in c;
  const hasRanges = typeof c === "object" && c !== null && "integer_range_list" in c;
  if (hasValue === hasRanges) {
    throw new ConstraintError(hasValue ? "both value and integer_range_list set" : "oneof constraint unset", { path });
  }
  if ("value" in c) {
    if (typeof c.value !== "string") throw new ConstraintError("value must be a string", { path: `${path}.value` });
    return value(key, c.value);
  }
  const list = c.integer_range_list;
  const listPath = `${path}.integer_range_list`;
  if (!Array.isArray(list) || list.length === 0) throw new ConstraintError("empty list", { path: listPath });
  const ranges = list.map((item, i): [bigint, bigint] => {
    const r: DraftRange = "range" in item ? item.range : item;
    const where = `${listPath}[${i}]`;
    if (r.min_value === undefined && r.max_value === undefined) {
      throw new ConstraintError("at least one of min_value and max_value must be set", { path: where });
    }
    const min = r.min_value === undefined ? 0n : toUint(r.min_value, `${where}.min_value`);
    const max = r.max_value === undefined ? MAX_UINT64 : toUint(r.max_value, `${where}.max_value`);
    if (min > max) throw new ConstraintError(`min_value ${min} > max_value ${max}`, { path: where });
    return [min, max];
  });
  return range(key, ...ranges);
}

function toUint(v: DraftUint, path: string): bigint {
  let n: bigint | undefined;
  if (typeof v === "bigint") n = v;
  else if (typeof v === "number" && Number.isSafeInteger(v)) n = BigInt(v);
  else if (typeof v === "string" && /^[0-9]{1,20}$/.test(v)) n = BigInt(v);
  if (n === undefined || n < 0n || n > MAX_UINT64) {
    throw new ConstraintError(`not a uint64: ${String(v)}`, { path });
  }
  return n;
}
