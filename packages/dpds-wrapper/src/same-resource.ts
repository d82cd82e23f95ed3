// Whether two decoded resources are the same, for "an identical resource from the new subscription is not
// re-delivered" (docs/decisions.md#dpds-make-before-break). Two subscriptions decode separately, so equal resources
// are distinct objects: they are compared by structure. Resource types decode into data (plain objects, arrays,
// maps, sets, byte arrays, protobuf-es messages); anything else counts as the same only when it is the same object.

export function sameResource(a: unknown, b: unknown): boolean {
  return same(a, b, 0);
}

/** Deeper than this, values are compared by identity only (no decoded resource nests this deep; it bounds recursion). */
const MAX_DEPTH = 200;

function same(a: unknown, b: unknown, depth: number): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (depth > MAX_DEPTH) return false;
  const proto = Object.getPrototypeOf(a);
  if (proto !== Object.getPrototypeOf(b)) return false;
  if (Array.isArray(a)) return sameArray(a, b as unknown[], depth);
  if (ArrayBuffer.isView(a)) return sameBytes(a, b as ArrayBufferView);
  if (a instanceof Map) return sameMap(a, b as Map<unknown, unknown>, depth);
  if (a instanceof Set) return sameSet(a, b as Set<unknown>, depth);
  if (a instanceof Date) return a.getTime() === (b as Date).getTime();
  if (proto !== Object.prototype && proto !== null) return false;
  return sameRecord(a as Record<string, unknown>, b as Record<string, unknown>, depth);
}

function sameArray(a: readonly unknown[], b: readonly unknown[], depth: number): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!same(a[i], b[i], depth + 1)) return false;
  return true;
}

function sameBytes(a: ArrayBufferView, b: ArrayBufferView): boolean {
  if (a.byteLength !== b.byteLength) return false;
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

function sameMap(a: Map<unknown, unknown>, b: Map<unknown, unknown>, depth: number): boolean {
  if (a.size !== b.size) return false;
  for (const [key, value] of a) {
    if (!b.has(key) || !same(value, b.get(key), depth + 1)) return false;
  }
  return true;
}

function sameSet(a: Set<unknown>, b: Set<unknown>, depth: number): boolean {
  if (a.size !== b.size) return false;
  const unmatched = [...b].filter((x) => !a.has(x));
  for (const x of a) {
    if (b.has(x)) continue;
    const i = unmatched.findIndex((y) => same(x, y, depth + 1));
    if (i < 0) return false;
    unmatched.splice(i, 1);
  }
  return true;
}

function sameRecord(a: Record<string, unknown>, b: Record<string, unknown>, depth: number): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key) || !same(a[key], b[key], depth + 1)) return false;
  }
  return true;
}
