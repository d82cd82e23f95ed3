import type { Expr, IntRange } from "./expr.js";
import { inRanges, type Params } from "./params.js";

/** A compiled expression: the same answers as `matches(expr, params)` for every `params`. */
export type Matcher = (params: Params) => boolean;

type Record_ = Readonly<Record<string, unknown>>;
type Node<P> = (params: P) => boolean;

/**
 * How one kind of parameter container is read. Both implementations agree with `lookup`: a key counts only with a
 * string value, and for plain objects only as an own property. Comparing with a string constant first makes the
 * own-property check run only on a hit.
 */
interface Access<P> {
  get(params: P, key: string): string | undefined;
  valueNode(key: string, value: string): Node<P>;
  existsNode(key: string): Node<P>;
}

const recordAccess: Access<Record_> = {
  get: (r, key) => {
    const v = r[key];
    return typeof v === "string" && Object.hasOwn(r, key) ? v : undefined;
  },
  valueNode: (key, value) => (r) => r[key] === value && Object.hasOwn(r, key),
  existsNode: (key) => (r) => typeof r[key] === "string" && Object.hasOwn(r, key),
};

const mapAccess: Access<ReadonlyMap<string, unknown>> = {
  get: (m, key) => {
    const v = m.get(key);
    return typeof v === "string" ? v : undefined;
  },
  valueNode: (key, value) => (m) => m.get(key) === value,
  existsNode: (key) => (m) => typeof m.get(key) === "string",
};

/**
 * Compiles `expr` into a closure tree (no code generation, no eval). The tree for plain objects is built at once,
 * the tree for Maps on first use. The expression is immutable, so the matcher never goes stale.
 */
export function compile(expr: Expr): Matcher {
  const forRecord = build(expr, recordAccess);
  let forMap: Node<ReadonlyMap<string, unknown>> | undefined;
  return (params) => {
    if (params instanceof Map) {
      forMap ??= build(expr, mapAccess);
      return forMap(params);
    }
    return forRecord(params as Record_);
  };
}

function build<P>(expr: Expr, access: Access<P>): Node<P> {
  switch (expr.kind) {
    case "true":
      return () => true;
    case "value":
      return access.valueNode(expr.key, expr.value);
    case "exists":
      return access.existsNode(expr.key);
    case "range":
      return buildRange(expr.key, expr.ranges, access.get);
    case "not": {
      const child = build(expr.child, access);
      return (p) => !child(p);
    }
    case "and":
      return buildAnd(expr.children, access);
    case "or":
      return buildOr(expr.children, access);
  }
}

function buildAnd<P>(children: readonly Expr[], access: Access<P>): Node<P> {
  // The common shape `k1=v1 && k2=v2 && ...` becomes one loop over two arrays.
  if (children.every((c) => c.kind === "value")) {
    const keys = children.map((c) => (c.kind === "value" ? c.key : ""));
    const values = children.map((c) => (c.kind === "value" ? c.value : ""));
    const n = keys.length;
    const get = access.get;
    return (p) => {
      for (let i = 0; i < n; i++) if (get(p, keys[i]!) !== values[i]) return false;
      return true;
    };
  }
  const nodes = children.map((c) => build(c, access));
  if (nodes.length === 2) {
    const [a, b] = nodes as [Node<P>, Node<P>];
    return (p) => a(p) && b(p);
  }
  return (p) => {
    for (const node of nodes) if (!node(p)) return false;
    return true;
  };
}

function buildOr<P>(children: readonly Expr[], access: Access<P>): Node<P> {
  const nodes = children.map((c) => build(c, access));
  if (nodes.length === 2) {
    const [a, b] = nodes as [Node<P>, Node<P>];
    return (p) => a(p) || b(p);
  }
  return (p) => {
    for (const node of nodes) if (node(p)) return true;
    return false;
  };
}

const SAFE_BOUND = BigInt(Number.MAX_SAFE_INTEGER);

function buildRange<P>(key: string, ranges: readonly IntRange[], get: Access<P>["get"]): Node<P> {
  if (!ranges.every((r) => r.max <= SAFE_BOUND)) {
    return (p) => {
      const v = get(p, key);
      return v !== undefined && inRanges(v, ranges);
    };
  }
  // Every bound is a safe integer. Converting a canonical decimal to a number is exact below 2^53 and gives at
  // least 2^53 above it (rounding is monotonic), so comparing with safe bounds gives the exact bigint answer.
  const mins = ranges.map((r) => Number(r.min));
  const maxs = ranges.map((r) => Number(r.max));
  const n = mins.length;
  return (p) => {
    const v = get(p, key);
    if (v === undefined || !isCanonicalDigits(v)) return false;
    const x = Number(v);
    for (let i = 0; i < n; i++) if (x >= mins[i]! && x <= maxs[i]!) return true;
    return false;
  };
}

/** Digits only, no leading zero except "0" itself, any length. */
function isCanonicalDigits(v: string): boolean {
  const len = v.length;
  if (len === 0) return false;
  if (v.charCodeAt(0) === 48) return len === 1;
  for (let i = 0; i < len; i++) {
    const c = v.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}
