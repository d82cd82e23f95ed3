// The RE2 engine (src/shared/regex.ts) against JavaScript's RegExp on the syntax and semantics both share: random
// patterns (literals, classes, `.`, groups, alternation, greedy and lazy repeats) and inputs (with letters that fold
// across scripts: ſ, K, é/É, and a surrogate pair). Short inputs keep the backtracking side fast.
// - fullMatch ⇔ `^(?:p)$` with the `u` flag (code points, Unicode simple case folding with `i`);
// - replaceAll ⇔ RE2's GlobalReplace loop run on RegExp's matches (RE2 takes no empty match where the previous match
//   ended; String.prototype.replace does), for patterns whose repeats apply to single characters: a repeated group
//   that can match empty is where the two engines' leftmost-first matches differ (RE2's `(?:|a)*` matches "" on "aaa",
//   JavaScript's "aaa"), and where captures inside repeats differ (JavaScript resets them on each iteration).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileRegex, compileRewrite } from "../src/internal.js";

const char = fc.constantFrom("a", "b", "c", "k", "s", "A", "S", "-", "/", "\\.", "é", "1");
const klass = fc.constantFrom(".", "\\d", "\\w", "[a-c]", "[^b]", "[A-Za-z0-9]", "[\\w.-]", "[sk]", "[^a-z]");
const quantifier = fc.constantFrom("", "", "*", "+", "?", "{2}", "{1,2}", "{0,}", "*?", "+?", "??", "{1,3}?");

/** Patterns where anything may be repeated: for full matches. */
const { pattern: anyPattern } = fc.letrec<{ atom: string; piece: string; concat: string; pattern: string }>((tie) => ({
  atom: fc.oneof(
    { depthSize: "small" },
    char,
    klass,
    tie("pattern").map((p) => `(?:${p})`),
  ),
  piece: fc.tuple(tie("atom"), quantifier).map(([atom, q]) => atom + q),
  concat: fc.array(tie("piece"), { maxLength: 4 }).map((pieces) => pieces.join("")),
  pattern: fc.array(tie("concat"), { minLength: 1, maxLength: 3 }).map((alternatives) => alternatives.join("|")),
}));

/** Patterns whose repeats apply to single characters, with capturing groups at the top level only: for replaceAll. */
const { pattern: flatPattern } = fc.letrec<{ piece: string; concat: string; pattern: string }>((tie) => ({
  piece: fc.oneof(
    { depthSize: "small" },
    fc.tuple(fc.oneof(char, klass), quantifier).map(([atom, q]) => atom + q),
    tie("pattern").map((p) => `(?:${p})`),
  ),
  concat: fc.array(tie("piece"), { maxLength: 4 }).map((pieces) => pieces.join("")),
  pattern: fc.array(tie("concat"), { minLength: 1, maxLength: 3 }).map((alternatives) => alternatives.join("|")),
}));
const groupedPattern = fc
  .array(fc.tuple(flatPattern, fc.boolean()), { minLength: 1, maxLength: 3 })
  .map((parts) => parts.map(([p, capture]) => (capture ? `(${p})` : `(?:${p})`)).join(""));

const input = fc.string({
  unit: fc.constantFrom("a", "b", "c", "k", "s", "A", "K", "S", "-", "/", ".", "1", " ", "é", "É", "ſ", "\u212a", "😀"),
  maxLength: 8,
});

/** RE2::GlobalReplace's loop over RegExp's leftmost-first matches (rewrite parts as compileRewrite makes them). */
function referenceReplace(pattern: string, text: string, parts: readonly (string | number)[]): string {
  const regex = new RegExp(pattern, "gu");
  let out = "";
  let at = 0;
  let lastEnd = -1;
  let count = 0;
  while (at <= text.length) {
    regex.lastIndex = at;
    const match = regex.exec(text);
    if (match === null) break;
    const start = match.index;
    const end = start + match[0].length;
    if (start === end && start === lastEnd) {
      if (at === text.length) break;
      const step = (text.codePointAt(at) ?? 0) > 0xffff ? 2 : 1;
      out += text.slice(at, at + step);
      at += step;
      continue;
    }
    out += text.slice(at, start);
    for (const part of parts) out += typeof part === "string" ? part : (match[part] ?? "");
    at = end;
    lastEnd = end;
    count++;
  }
  if (count === 0) return text;
  return out + text.slice(at);
}

describe("the RE2 engine agrees with RegExp on their common syntax", () => {
  it("fullMatch, case-sensitive and ignoring case", () => {
    fc.assert(
      fc.property(anyPattern, fc.array(input, { minLength: 1, maxLength: 6 }), fc.boolean(), (pattern, texts, fold) => {
        const ours = compileRegex(pattern, { ignoreCase: fold });
        const theirs = new RegExp(`^(?:${pattern})$`, fold ? "iu" : "u");
        for (const text of texts)
          expect(ours.fullMatch(text), `${pattern} on ${JSON.stringify(text)}`).toBe(theirs.test(text));
      }),
      { numRuns: 500 },
    );
  });

  it("replaceAll with \\0..\\3 and literal text", () => {
    fc.assert(
      fc.property(
        groupedPattern,
        fc.array(fc.oneof(fc.constantFrom("\\0", "\\1", "\\2", "\\3", "\\\\"), fc.constantFrom("<", ">", "x", "")), {
          maxLength: 4,
        }),
        fc.array(input, { minLength: 1, maxLength: 4 }),
        (pattern, rewriteParts, texts) => {
          const regex = compileRegex(pattern);
          const text = rewriteParts.filter((p) => !/^\\[1-9]$/.test(p) || Number(p[1]) <= regex.groupCount).join("");
          const rewrite = compileRewrite(regex, text);
          for (const subject of texts) {
            expect(regex.replaceAll(subject, rewrite), `${pattern} → ${text} on ${JSON.stringify(subject)}`).toBe(
              referenceReplace(pattern, subject, rewrite.parts),
            );
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
