import type { HeaderMatcherView as HeaderMatcherProto } from "../gen/envoy/config/route/v3/route_components_view.js";
import type { StringMatcherView as StringMatcherProto } from "../gen/envoy/type/matcher/v3/string_view.js";
import { compileRegex, RegexError } from "../shared/regex.js";
import { fieldPath, type ValidationErrors } from "./validation.js";

/** A validated envoy `StringMatcher` (`safe_regex` compiles with RE2 semantics; `ignoreCase` is never set on it). */
export type StringMatcher =
  | { readonly type: "exact" | "prefix" | "suffix" | "contains"; readonly value: string; readonly ignoreCase: boolean }
  | { readonly type: "safe_regex"; readonly regex: string; readonly ignoreCase: false };

/** A validated route header matcher (A28). `range` is envoy's half-open `[start, end)`. */
export type HeaderMatcher = { readonly name: string; readonly invert: boolean } & (
  | { readonly type: "exact" | "prefix" | "suffix" | "contains"; readonly value: string; readonly ignoreCase: boolean }
  | { readonly type: "safe_regex"; readonly regex: string }
  | { readonly type: "range"; readonly start: bigint; readonly end: bigint }
  | { readonly type: "present"; readonly present: boolean }
);

/** A route's path matcher (A28): `prefix`, `path` (exact `/service/method`) or `safe_regex`. */
export type PathMatcher =
  | { readonly type: "prefix" | "path"; readonly value: string; readonly caseSensitive: boolean }
  | { readonly type: "safe_regex"; readonly regex: string; readonly caseSensitive: boolean };

/**
 * Why RE2 refuses `regex`, or undefined when it compiles. Validation is the engine's own compile (regex.ts), cached,
 * so the compiled pattern is there when the resource is used.
 */
export function regexProblem(regex: string, ignoreCase = false): string | undefined {
  try {
    compileRegex(regex, { ignoreCase });
    return undefined;
  } catch (error) {
    if (error instanceof RegexError) return error.message;
    throw error;
  }
}

/** Validates a StringMatcher; reports under `path` and returns undefined when it is unusable. */
export function parseStringMatcher(
  proto: StringMatcherProto | undefined,
  path: string,
  errors: ValidationErrors,
): StringMatcher | undefined {
  if (proto === undefined) {
    errors.add(path, "field not present");
    return undefined;
  }
  const pattern = proto.matchPattern;
  switch (pattern.case) {
    case "exact":
    case "prefix":
    case "suffix":
    case "contains":
      return Object.freeze({ type: pattern.case, value: pattern.value, ignoreCase: proto.ignoreCase });
    case "safeRegex": {
      const invalid = regexProblem(pattern.value.regex);
      if (invalid !== undefined) {
        errors.add(fieldPath(path, "safe_regex.regex"), `invalid regex: ${invalid}`);
        return undefined;
      }
      if (proto.ignoreCase) {
        errors.add(fieldPath(path, "ignore_case"), "not supported for regex matcher");
        return undefined;
      }
      return Object.freeze({ type: "safe_regex", regex: pattern.value.regex, ignoreCase: false });
    }
    default:
      errors.add(path, "invalid string matcher");
      return undefined;
  }
}

/** Validates one route header matcher; `path` names it (`...match.headers[i]`). */
export function parseHeaderMatcher(
  proto: HeaderMatcherProto,
  path: string,
  errors: ValidationErrors,
): HeaderMatcher | undefined {
  const name = proto.name;
  const invert = proto.invertMatch;
  const spec = proto.headerMatchSpecifier;
  switch (spec.case) {
    case "exactMatch":
      return Object.freeze({ name, invert, type: "exact", value: spec.value, ignoreCase: false });
    case "prefixMatch":
      return Object.freeze({ name, invert, type: "prefix", value: spec.value, ignoreCase: false });
    case "suffixMatch":
      return Object.freeze({ name, invert, type: "suffix", value: spec.value, ignoreCase: false });
    case "containsMatch":
      return Object.freeze({ name, invert, type: "contains", value: spec.value, ignoreCase: false });
    case "safeRegexMatch": {
      const invalid = regexProblem(spec.value.regex);
      if (invalid !== undefined) {
        errors.add(
          fieldPath(path, "safe_regex_match.regex"),
          `cannot create header matcher: invalid regex: ${invalid}`,
        );
        return undefined;
      }
      return Object.freeze({ name, invert, type: "safe_regex", regex: spec.value.regex });
    }
    case "rangeMatch": {
      const { start, end } = spec.value;
      if (end < start) {
        errors.add(path, "cannot create header matcher: range end must not be smaller than range start");
        return undefined;
      }
      return Object.freeze({ name, invert, type: "range", start, end });
    }
    case "presentMatch":
      return Object.freeze({ name, invert, type: "present", present: spec.value });
    case "stringMatch": {
      const matcher = parseStringMatcher(spec.value, fieldPath(path, "string_match"), errors);
      if (matcher === undefined) return undefined;
      return matcher.type === "safe_regex"
        ? Object.freeze({ name, invert, type: "safe_regex", regex: matcher.regex })
        : Object.freeze({ name, invert, type: matcher.type, value: matcher.value, ignoreCase: matcher.ignoreCase });
    }
    default:
      errors.add(path, "invalid header matcher");
      return undefined;
  }
}

/**
 * gRPC's virtual-host domain patterns: an exact name (no `*`), `*`, a suffix match (starting with `*`) or a prefix
 * match (ending with `*`). Empty patterns, and a `*` elsewhere in a pattern with neither, are invalid.
 */
export function isValidDomainPattern(pattern: string): boolean {
  if (pattern === "") return false;
  if (!pattern.includes("*")) return true;
  return pattern.startsWith("*") || pattern.endsWith("*");
}
