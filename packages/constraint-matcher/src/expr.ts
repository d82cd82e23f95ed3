import { ConstraintError } from "./constraint-error.js";

/** The largest uint64, the upper bound of every draft-dialect integer range. */
export const MAX_UINT64 = 0xffff_ffff_ffff_ffffn;

/**
 * An inclusive range of unsigned 64-bit integers. Bounds are `bigint` everywhere in this package, because the
 * draft's `Range{uint64 min_value, max_value}` exceeds the integers a `number` holds exactly.
 * Invariant: `0n <= min <= max <= MAX_UINT64`.
 */
export interface IntRange {
  readonly min: bigint;
  readonly max: bigint;
}

/** Matches every parameter map: a variant with no constraints. */
export interface TrueExpr {
  readonly kind: "true";
}
/** True iff the parameters hold `key` with exactly `value`; false when `key` is absent. */
export interface ValueExpr {
  readonly kind: "value";
  readonly key: string;
  readonly value: string;
}
/** True iff the parameters hold `key`, whatever its value. */
export interface ExistsExpr {
  readonly kind: "exists";
  readonly key: string;
}
/**
 * Draft dialect: true iff `key` is present, its value is an unsigned integer written in canonical decimal (no sign,
 * no leading zero, at most MAX_UINT64) and lies in one of `ranges`. Invariant: `ranges` is not empty.
 */
export interface RangeExpr {
  readonly kind: "range";
  readonly key: string;
  readonly ranges: readonly IntRange[];
}
/** True iff every child is. Invariant: at least two children (the constructor unwraps a single child). */
export interface AndExpr {
  readonly kind: "and";
  readonly children: readonly Expr[];
}
/** True iff some child is. Invariant: at least two children (the constructor unwraps a single child). */
export interface OrExpr {
  readonly kind: "or";
  readonly children: readonly Expr[];
}
/** True iff `child` is false. */
export interface NotExpr {
  readonly kind: "not";
  readonly child: Expr;
}

/** A constraint expression: immutable (deeply frozen) and compared with `equals`. */
export type Expr = TrueExpr | ValueExpr | ExistsExpr | RangeExpr | AndExpr | OrExpr | NotExpr;
/** The literals: the leaves that look at one key. */
export type LiteralExpr = ValueExpr | ExistsExpr | RangeExpr;

/** No constraints: matches every parameter map, including the empty one. */
export const TRUE: TrueExpr = Object.freeze({ kind: "true" });
/** Matches no parameter map. It is `not(TRUE)`, and prints as `!true`. */
export const FALSE: NotExpr = Object.freeze({ kind: "not", child: TRUE });

export function value(key: string, v: string): ValueExpr {
  checkString(key, "key");
  checkString(v, "value");
  return Object.freeze({ kind: "value", key, value: v });
}

export function exists(key: string): ExistsExpr {
  checkString(key, "key");
  return Object.freeze({ kind: "exists", key });
}

/** `range("shard", [1n, 10n], [20n, 30n])`: the value of `shard` is an integer in 1..10 or in 20..30. */
export function range(key: string, ...ranges: ReadonlyArray<readonly [bigint, bigint]>): RangeExpr {
  checkString(key, "key");
  if (ranges.length === 0) throw new ConstraintError(`range(${JSON.stringify(key)}) needs at least one [min, max]`);
  const frozen = ranges.map(([min, max], i) => makeRange(min, max, `range(${JSON.stringify(key)}) range ${i}`));
  return Object.freeze({ kind: "range", key, ranges: Object.freeze(frozen) });
}

/** Builds one frozen range, checking `0 <= min <= max <= MAX_UINT64`; `where` names it in the error. */
export function makeRange(min: bigint, max: bigint, where: string): IntRange {
  if (typeof min !== "bigint" || typeof max !== "bigint") {
    throw new ConstraintError(`${where}: bounds must be bigint`);
  }
  if (min < 0n || max > MAX_UINT64) throw new ConstraintError(`${where}: bounds must lie in 0..${MAX_UINT64}`);
  if (min > max) throw new ConstraintError(`${where}: min ${min} > max ${max}`);
  return Object.freeze({ min, max });
}

/** All children must hold. One child is returned as is; an empty list is an error (use `TRUE`). */
export function and(children: readonly Expr[]): Expr {
  return junction("and", children);
}

/** Some child must hold. One child is returned as is; an empty list is an error (use `FALSE`). */
export function or(children: readonly Expr[]): Expr {
  return junction("or", children);
}

export function not(child: Expr): NotExpr {
  checkExpr(child, "not()");
  return Object.freeze({ kind: "not", child });
}

function junction(kind: "and" | "or", children: readonly Expr[]): Expr {
  if (!Array.isArray(children)) throw new ConstraintError(`${kind}() takes an array of expressions`);
  if (children.length === 0) {
    throw new ConstraintError(`${kind}() needs at least one child (an empty list has no agreed meaning)`);
  }
  children.forEach((c, i) => {
    checkExpr(c, `${kind}() child ${i}`);
  });
  if (children.length === 1) return children[0]!;
  return Object.freeze({ kind, children: Object.freeze([...children]) });
}

function checkString(s: unknown, what: string): void {
  if (typeof s !== "string") throw new ConstraintError(`${what} must be a string, got ${typeof s}`);
}

function checkExpr(e: unknown, where: string): void {
  if (typeof e !== "object" || e === null || !("kind" in e)) {
    throw new ConstraintError(`${where}: not a constraint expression`);
  }
}

/** Structural equality: same tree, same keys, values and ranges, children in the same order. */
export function equals(a: Expr, b: Expr): boolean {
  if (a === b) return true;
  switch (a.kind) {
    case "true":
      return b.kind === "true";
    case "value":
      return b.kind === "value" && a.key === b.key && a.value === b.value;
    case "exists":
      return b.kind === "exists" && a.key === b.key;
    case "range":
      return (
        b.kind === "range" &&
        a.key === b.key &&
        a.ranges.length === b.ranges.length &&
        a.ranges.every((r, i) => r.min === b.ranges[i]!.min && r.max === b.ranges[i]!.max)
      );
    case "not":
      return b.kind === "not" && equals(a.child, b.child);
    case "and":
    case "or":
      return (
        b.kind === a.kind &&
        a.children.length === b.children.length &&
        a.children.every((c, i) => equals(c, b.children[i]!))
      );
  }
}

/** Every key the expression mentions, sorted. */
export function keysOf(expr: Expr): string[] {
  const keys = new Set<string>();
  const walk = (e: Expr): void => {
    switch (e.kind) {
      case "true":
        return;
      case "value":
      case "exists":
      case "range":
        keys.add(e.key);
        return;
      case "not":
        walk(e.child);
        return;
      case "and":
      case "or":
        for (const c of e.children) walk(c);
    }
  };
  walk(expr);
  return [...keys].sort(compareStrings);
}

/** Code-unit order, the one order every sort in this package uses (locale-independent, total). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
