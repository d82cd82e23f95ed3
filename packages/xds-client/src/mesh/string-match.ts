// Matchers validated by the decoders (resources/matchers.ts), compiled into predicates for the mesh runtime (RBAC,
// SAN checks). Rules as gRPC C-core applies them:
// - `exact`/`prefix`/`suffix`/`contains` with `ignoreCase` compare lower-cased text;
// - `safe_regex` is a full match of an RE2 pattern, compiled by the one engine of every xDS regex (src/shared/regex.ts);
// - a header matcher other than `present` never matches an absent header, `invert` or not; `present` compares
//   presence; `range` is `[start, end)` over a base-10 int64.

import type { HeaderMatcher, StringMatcher } from "../resources/matchers.js";
import { compileRegex } from "../shared/regex.js";

export type StringPredicate = (value: string) => boolean;

/** A full match of an RE2 pattern the decoders validated, in time linear in the value (src/shared/regex.ts). */
function fullMatch(pattern: string): StringPredicate {
  const regex = compileRegex(pattern);
  return (value) => regex.fullMatch(value);
}

/** A predicate for a validated StringMatcher. */
export function compileStringMatcher(matcher: StringMatcher): StringPredicate {
  if (matcher.type === "safe_regex") return fullMatch(matcher.regex);
  const ignoreCase = matcher.ignoreCase;
  const want = ignoreCase ? matcher.value.toLowerCase() : matcher.value;
  switch (matcher.type) {
    case "exact":
      return ignoreCase ? (value) => value.toLowerCase() === want : (value) => value === want;
    case "prefix": {
      if (ignoreCase) return (value) => value.toLowerCase().startsWith(want);
      // The last character of the prefix first: a cheap test that rejects most values before startsWith runs.
      const at = want.length - 1;
      const last = want.charCodeAt(at);
      return at < 0 ? () => true : (value) => value.charCodeAt(at) === last && value.startsWith(want);
    }
    case "suffix": {
      if (ignoreCase) return (value) => value.toLowerCase().endsWith(want);
      const last = want.charCodeAt(want.length - 1);
      return want.length === 0
        ? () => true
        : (value) => value.charCodeAt(value.length - 1) === last && value.endsWith(want);
    }
    case "contains":
      return ignoreCase ? (value) => value.toLowerCase().includes(want) : (value) => value.includes(want);
  }
}

const INTEGER = /^[+-]?[0-9]+$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * `[start, end)` over a header holding a base-10 int64 (grpc-go's ParseInt: a value outside int64 never matches).
 * A value of at most 15 digits is below 2^53, so when both ends are safe integers it compares as a double, exactly;
 * anything else as a BigInt.
 */
function rangePredicate(start: bigint, end: bigint): StringPredicate {
  const safe = start >= BigInt(Number.MIN_SAFE_INTEGER) && end <= BigInt(Number.MAX_SAFE_INTEGER);
  const startNumber = Number(start);
  const endNumber = Number(end);
  return (value) => {
    if (!INTEGER.test(value)) return false;
    const digits = value.length - (value[0] === "+" || value[0] === "-" ? 1 : 0);
    if (safe && digits <= 15) {
      const number = Number(value);
      return number >= startNumber && number < endNumber;
    }
    const number = BigInt(value);
    return number >= INT64_MIN && number <= INT64_MAX && number >= start && number < end;
  };
}

/**
 * A predicate over a header's value (`undefined`: the header is absent), with `invert` applied. Header names and
 * how a call's value is read are the caller's business.
 */
export function compileHeaderValueMatcher(matcher: HeaderMatcher): (value: string | undefined) => boolean {
  const invert = matcher.invert;
  if (matcher.type === "present") {
    const present = matcher.present;
    return (value) => ((value !== undefined) === present) !== invert;
  }
  let test: StringPredicate;
  switch (matcher.type) {
    case "safe_regex":
      test = fullMatch(matcher.regex);
      break;
    case "range":
      test = rangePredicate(matcher.start, matcher.end);
      break;
    default:
      test = compileStringMatcher({ type: matcher.type, value: matcher.value, ignoreCase: matcher.ignoreCase });
  }
  return (value) => value !== undefined && test(value) !== invert;
}

/** Whether a header matcher can only match a call that has the header. */
export function headerMatcherNeedsHeader(matcher: HeaderMatcher): boolean {
  return matcher.type !== "present" || matcher.present !== matcher.invert;
}
