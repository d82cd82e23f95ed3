// A63's string matching, one implementation for every user (route header matchers, and the RBAC and SAN checks that
// take a StringMatcher): exact, prefix, suffix or contains, optionally ignoring case, or an RE2 full match.
import { compileRegex } from "./regex.js";

/** A validated StringMatcher, or a header matcher's string part. */
export type StringMatch =
  | { readonly type: "exact" | "prefix" | "suffix" | "contains"; readonly value: string; readonly ignoreCase: boolean }
  | { readonly type: "safe_regex"; readonly regex: string };

/**
 * The test `matcher` stands for, compiled once. `ignoreCase` compares lower-cased strings; `safe_regex` is RE2's
 * full match (compileRegex: throws RegexError for a pattern validation would have refused).
 */
export function compileStringMatch(matcher: StringMatch): (value: string) => boolean {
  if (matcher.type === "safe_regex") {
    const regex = compileRegex(matcher.regex);
    return (value) => regex.fullMatch(value);
  }
  const ignoreCase = matcher.ignoreCase;
  const want = ignoreCase ? matcher.value.toLowerCase() : matcher.value;
  const norm = ignoreCase ? (value: string) => value.toLowerCase() : (value: string) => value;
  switch (matcher.type) {
    case "exact":
      return (value) => norm(value) === want;
    case "prefix":
      return (value) => norm(value).startsWith(want);
    case "suffix":
      return (value) => norm(value).endsWith(want);
    case "contains":
      return (value) => norm(value).includes(want);
  }
}
