// Regular expressions from xDS (`safe_regex` in route paths, header and string matchers, hash policy `regex_rewrite`)
// compiled by re2js: RE2's syntax and semantics, matching in time linear in the input, whatever the pattern.
// Validation is this compile, so a resource is accepted exactly when its patterns compile here.
// See docs/decisions.md#regular-expressions-from-xds.
import { createRequire } from "node:module";
import type { RE2JS } from "re2js";

/**
 * re2js, loaded on the first compile (its CommonJS build, synchronously): importing the client, and a client whose
 * resources hold no regex, never pay for it.
 */
let engine: typeof RE2JS | undefined;
function re2js(): typeof RE2JS {
  engine ??= (createRequire(import.meta.url)("re2js") as { RE2JS: typeof RE2JS }).RE2JS;
  return engine;
}

/** A pattern compiled with RE2 semantics. Shared: matching keeps no state between calls. */
export interface Re2Regex {
  readonly pattern: string;
  readonly ignoreCase: boolean;
  /** How many capturing groups the pattern has (`\1`..`\N` in a rewrite). */
  readonly groupCount: number;
  /** Whether the pattern matches the whole of `input` (RE2::FullMatch). */
  fullMatch(input: string): boolean;
  /**
   * `input` with every non-overlapping match, leftmost first, replaced by `rewrite` (RE2::GlobalReplace): an empty
   * match right after the previous match is skipped. Returns `input` itself when nothing matched.
   */
  replaceAll(input: string, rewrite: Re2Rewrite): string;
}

/** An RE2 rewrite string checked against its regex: literal text, `\0` (the match), `\1`..`\9`, `\\`. */
export interface Re2Rewrite {
  readonly text: string;
  /** Literal text (strings) and group numbers, in order. */
  readonly parts: readonly (string | number)[];
}

/** A pattern or rewrite RE2 would refuse; `message` is the reason. */
export class RegexError extends Error {
  override readonly name = "RegexError";
}

/**
 * RE2's default `max_mem` (8 MiB) gives two thirds to the forward program at 8 bytes an instruction, less the
 * program's header: RE2 refuses a program of more instructions ("pattern too large - compile failed"). re2js counts
 * one instruction per rune range where RE2 counts UTF-8 byte ranges, so near this size RE2 may refuse a pattern with
 * large Unicode classes that passes here.
 */
export const MAX_PROGRAM_SIZE = 699_000;

const PARSE_PREFIX = "error parsing regexp: ";

/**
 * Compiled patterns by flag and source, most recently used last, so that validation, the route table built from the
 * validated resource and the next update of the same resource compile each pattern once. Bounded by count and by
 * total program size; a pattern over a quarter of that size is not kept.
 */
const cache = new Map<string, { readonly regex: Re2Regex; readonly size: number }>();
const CACHE_ENTRIES = 512;
const CACHE_INSTRUCTIONS = 200_000;
let cachedInstructions = 0;

/**
 * Compiles `pattern` as RE2 does with its default options (Perl classes, `^`/`$` at the ends of the input only,
 * `.` not matching `\n`), case-insensitively when asked. Throws RegexError naming the reason when RE2 would refuse
 * it: bad syntax, a repeat count over 1000, nested repeats whose product is over 1000, a program over
 * MAX_PROGRAM_SIZE. Compiled patterns are cached, so validation and later use compile once.
 */
export function compileRegex(pattern: string, options: { readonly ignoreCase?: boolean } = {}): Re2Regex {
  const ignoreCase = options.ignoreCase === true;
  const key = (ignoreCase ? "i:" : "c:") + pattern;
  const hit = cache.get(key);
  if (hit !== undefined) {
    cache.delete(key);
    cache.set(key, hit);
    return hit.regex;
  }
  const entry = build(pattern, ignoreCase);
  if (entry.size <= CACHE_INSTRUCTIONS / 4) remember(key, entry);
  return entry.regex;
}

function build(pattern: string, ignoreCase: boolean): { readonly regex: Re2Regex; readonly size: number } {
  let re: RE2JS;
  try {
    const RE2 = re2js();
    re = RE2.compile(pattern, ignoreCase ? RE2.CASE_INSENSITIVE : 0);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new RegexError(message.startsWith(PARSE_PREFIX) ? message.slice(PARSE_PREFIX.length) : message);
  }
  const size = re.programSize();
  if (size > MAX_PROGRAM_SIZE) {
    throw new RegexError(`pattern too large: ${size} instructions, RE2's limit is ${MAX_PROGRAM_SIZE}`);
  }
  const groupCount = re.groupCount();
  const regex: Re2Regex = Object.freeze({
    pattern,
    ignoreCase,
    groupCount,
    fullMatch: (input: string) => re.testExact(input),
    replaceAll: (input: string, rewrite: Re2Rewrite) => globalReplace(re, input, rewrite),
  });
  return { regex, size };
}

function remember(key: string, entry: { readonly regex: Re2Regex; readonly size: number }): void {
  cache.set(key, entry);
  cachedInstructions += entry.size;
  for (const [oldKey, old] of cache) {
    if (cache.size <= CACHE_ENTRIES && cachedInstructions <= CACHE_INSTRUCTIONS) break;
    cache.delete(oldKey);
    cachedInstructions -= old.size;
  }
}

/**
 * Checks an RE2 rewrite string for `regex` (RE2::CheckRewriteString): `\` must be followed by a digit or `\`, and a
 * group it names must exist. Throws RegexError otherwise.
 */
export function compileRewrite(regex: Re2Regex, text: string): Re2Rewrite {
  const parts: (string | number)[] = [];
  let literal = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== "\\") {
      literal += c;
      continue;
    }
    const next = text[++i];
    if (next === "\\") {
      literal += "\\";
    } else if (next !== undefined && next >= "0" && next <= "9") {
      const group = next.charCodeAt(0) - 48;
      if (group > regex.groupCount) {
        throw new RegexError(
          `rewrite "${text}" refers to group \\${group}, but the regex has ${plural(regex.groupCount, "capturing group")}`,
        );
      }
      if (literal !== "") parts.push(literal);
      literal = "";
      parts.push(group);
    } else {
      throw new RegexError(`rewrite "${text}" has an invalid escape: a backslash must be followed by a digit or \\`);
    }
  }
  if (literal !== "") parts.push(literal);
  return Object.freeze({ text, parts: Object.freeze(parts) });
}

function globalReplace(re: RE2JS, input: string, rewrite: Re2Rewrite): string {
  // A match-or-not scan needs no positions, so it runs on the DFA alone: the common no-match case stays cheap.
  if (!re.test(input)) return input;
  const matcher = re.matcher(input);
  const end = input.length;
  let out = "";
  let at = 0;
  let lastEnd = -1;
  let count = 0;
  while (at <= end && matcher.find(at)) {
    const matchStart = matcher.start();
    const matchEnd = matcher.end();
    if (matchStart === matchEnd && matchStart === lastEnd) {
      // RE2 takes no empty match where the previous match ended: copy one character (a code point) and go on.
      if (at === end) break;
      const step = isHighSurrogate(input.charCodeAt(at)) && isLowSurrogate(input.charCodeAt(at + 1)) ? 2 : 1;
      out += input.slice(at, at + step);
      at += step;
      continue;
    }
    out += input.slice(at, matchStart);
    for (const part of rewrite.parts) out += typeof part === "string" ? part : (matcher.group(part) ?? "");
    at = matchEnd;
    lastEnd = matchEnd;
    count++;
  }
  if (count === 0) return input;
  return at < end ? out + input.slice(at) : out;
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;
const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;
