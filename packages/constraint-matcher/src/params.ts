import { type IntRange, MAX_UINT64 } from "./expr.js";

/**
 * A subscription's dynamic parameters: a plain object or a Map from key to value. Only own string-valued
 * properties count: inherited properties (`toString`) and non-string values are treated as absent keys.
 */
export type Params = Readonly<Record<string, string>> | ReadonlyMap<string, string>;

/** The value of `key` in `params`, or undefined when absent. The one definition every evaluator agrees with. */
export function lookup(params: Params, key: string): string | undefined {
  if (params instanceof Map) {
    const v = params.get(key);
    return typeof v === "string" ? v : undefined;
  }
  const record = params as Readonly<Record<string, unknown>>;
  const v = record[key];
  return typeof v === "string" && Object.hasOwn(record, key) ? v : undefined;
}

const CANONICAL_UINT = /^(?:0|[1-9][0-9]{0,19})$/;

/**
 * The unsigned integer written by `text` in canonical decimal, or undefined when `text` is anything else
 * (a sign, a leading zero, spaces, a fraction, or more than MAX_UINT64).
 */
export function parseUint64(text: string): bigint | undefined {
  if (!CANONICAL_UINT.test(text)) return undefined;
  const n = BigInt(text);
  return n <= MAX_UINT64 ? n : undefined;
}

/** Whether `text` is a canonical uint64 lying in one of `ranges`. */
export function inRanges(text: string, ranges: readonly IntRange[]): boolean {
  const n = parseUint64(text);
  if (n === undefined) return false;
  for (const r of ranges) if (n >= r.min && n <= r.max) return true;
  return false;
}
