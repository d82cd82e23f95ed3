// The RE2 engine behind every regex from xDS (src/shared/regex.ts): RE2's limits, full match, GlobalReplace and
// rewrites, and matching in linear time on patterns JavaScript's RegExp takes exponential time on.
import { monitorEventLoopDelay } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import {
  compileHeaderValueMatcher,
  compileRegex,
  compileRewrite,
  compileStringMatcher,
  MAX_PROGRAM_SIZE,
  RegexError,
} from "../src/internal.js";

const refused = (pattern: string): string => {
  try {
    compileRegex(pattern);
  } catch (error) {
    expect(error).toBeInstanceOf(RegexError);
    return (error as Error).message;
  }
  return expect.fail(`"${pattern}" compiled`);
};

describe("compileRegex: RE2's language", () => {
  it.each([
    ["a{1000}", "a".repeat(1000)],
    ["a{0,1000}", ""],
    ["a{1000,}", "a".repeat(1200)],
    ["(a{10}){100}", "a".repeat(1000)],
    ["((a{2}){2}){250}", "a".repeat(1000)],
    ["(?:a{0}){1000}", ""],
    ["(?P<first>x)(?<second>y)", "xy"],
    ["\\Q.*\\E", ".*"],
    ["\\pL+\\p{Greek}", "aλ"],
    ["[[:alpha:]]\\d\\x41\\x{263a}", "z7A☺"],
    ["(?i)abc(?-i)d", "ABCd"],
    ["", ""],
  ])("accepts %s (and it matches what it should)", (pattern, input) => {
    expect(compileRegex(pattern).fullMatch(input)).toBe(true);
  });

  it.each([
    ["a{1001}", "invalid repeat count: `{1001}`"],
    ["a{1001,}", "invalid repeat count: `{1001,}`"],
    ["a{2,1}", "invalid repeat count: `{2,1}`"],
    // RE2 bounds the product of nested counts by 1000 as well.
    ["(a{100}){100}", "invalid repeat count: `{100}`"],
    ["(a{10}){101}", "invalid repeat count: `{101}`"],
    ["((a{2}){2}){251}", "invalid repeat count: `{251}`"],
    ["a**", "invalid nested repetition operator: `**`"],
    ["a(?=b)", "invalid or unsupported Perl syntax: `(?=`"],
    ["(?<=a)b", "invalid named capture: `(?<=a)b`"],
    ["(a)\\1", "invalid escape sequence: `\\1`"],
    ["(", "missing closing ): `(`"],
    ["\\p{Nope}", "invalid character class range: `\\p{Nope}`"],
  ])("refuses %s: %s", (pattern, reason) => {
    expect(refused(pattern)).toBe(reason);
  });

  it(`refuses a program over RE2's ${MAX_PROGRAM_SIZE.toLocaleString("en-US")} instructions, naming its size`, () => {
    // 700 copies of a 1,000-instruction repeat: every count within RE2's limits, the whole program over its size.
    expect(refused("(?:[a-z]{1000})".repeat(700))).toMatch(/^pattern too large: 7\d{5} instructions, RE2's limit is/);
  });

  it("refuses a pattern nested 1000 deep as re2js's parser bounds it, with a reason (docs/decisions.md)", () => {
    const nested = (depth: number) => `${"(".repeat(depth)}a${")".repeat(depth)}`;
    expect(compileRegex(nested(999)).fullMatch("a")).toBe(true);
    expect(refused(nested(1000))).toBe("expression nests too deeply");
  });

  it("compiles a pattern once: the same pattern and flag give the same compiled regex", () => {
    expect(compileRegex("/pkg\\.Svc/.*")).toBe(compileRegex("/pkg\\.Svc/.*"));
    expect(compileRegex("/pkg\\.Svc/.*", { ignoreCase: true })).not.toBe(compileRegex("/pkg\\.Svc/.*"));
  });
});

describe("Re2Regex.fullMatch", () => {
  it("matches the whole input, by code point, case-folded as RE2 folds", () => {
    const svc = compileRegex("/pkg\\.Svc/(Get|List)[A-Z]\\w*");
    expect(svc.fullMatch("/pkg.Svc/GetUser")).toBe(true);
    expect(svc.fullMatch("/pkg.Svc/GetUser/extra")).toBe(false);
    expect(svc.fullMatch("x/pkg.Svc/GetUser")).toBe(false);
    expect(compileRegex("a|ab").fullMatch("ab")).toBe(true);
    expect(compileRegex(".").fullMatch("😀")).toBe(true);
    expect(compileRegex(".").fullMatch("\n")).toBe(false);
    const folded = compileRegex("KS", { ignoreCase: true });
    expect(folded.fullMatch("ks")).toBe(true);
    expect(folded.fullMatch("\u212a\u017f")).toBe(true);
  });
});

describe("Re2Regex.replaceAll: RE2::GlobalReplace", () => {
  // RE2's own GlobalReplace cases (re2/testing/re2_test.cc, TEST(RE2, Replace) and Issue104).
  it.each([
    [
      "(qu|[b-df-hj-np-tv-z]*)([a-z]+)",
      "\\2\\1ay",
      "the quick brown fox jumps over the lazy dogs.",
      "ethay ickquay ownbray oxfay umpsjay overay ethay azylay ogsday.",
    ],
    ["\\w+", "\\0-NOSPAM", "abcd.efghi@google.com", "abcd-NOSPAM.efghi-NOSPAM@google-NOSPAM.com-NOSPAM"],
    ["^", "(START)", "foo", "(START)foo"],
    ["^", "(START)", "", "(START)"],
    ["$", "(END)", "", "(END)"],
    ["b", "bb", "ababababab", "abbabbabbabbabb"],
    ["b", "bb", "bbbbbb", "bbbbbbbbbbbb"],
    ["b+", "bb", "bbbbbb", "bb"],
    ["b*", "bb", "bbbbbb", "bb"],
    ["b*", "bb", "aaaaa", "bbabbabbabbabbabb"],
    ["a.*a", "(\\0)", "aba\naba", "(aba)\n(aba)"],
    ["a*", "d", "bc", "dbdcd"],
    ["Ć*", "Ĉ", "ąć", "ĈąĈćĈ"],
    ["大*", "小", "人类", "小人小类小"],
  ])("%s → %s on %j", (pattern, rewrite, input, expected) => {
    const regex = compileRegex(pattern);
    expect(regex.replaceAll(input, compileRewrite(regex, rewrite))).toBe(expected);
  });

  it("takes no empty match where the previous match ended (JavaScript's replace does), and steps over a surrogate pair", () => {
    const regex = compileRegex("b*");
    expect(regex.replaceAll("abc", compileRewrite(regex, "x"))).toBe("xaxcx");
    expect("abc".replace(/b*/g, "x")).toBe("xaxxcx");
    expect(regex.replaceAll("😀", compileRewrite(regex, "-"))).toBe("-😀-");
  });

  it("leaves an unmatched group empty and returns the input itself when nothing matched", () => {
    const regex = compileRegex("(a)|(b)");
    expect(regex.replaceAll("ab", compileRewrite(regex, "[\\1\\2\\\\]"))).toBe("[a\\][b\\]");
    const input = "zzz";
    expect(regex.replaceAll(input, compileRewrite(regex, "y"))).toBe(input);
  });
});

describe("compileRewrite: RE2::CheckRewriteString", () => {
  it("refuses a group the regex lacks, a lone backslash and an unknown escape", () => {
    const regex = compileRegex("(a)(b)");
    expect(compileRewrite(regex, "\\2\\1\\0").parts).toEqual([2, 1, 0]);
    expect(() => compileRewrite(regex, "\\3")).toThrow(
      new RegexError('rewrite "\\3" refers to group \\3, but the regex has 2 capturing groups'),
    );
    expect(() => compileRewrite(regex, "x\\")).toThrow(/invalid escape/);
    expect(() => compileRewrite(regex, "\\n")).toThrow(/invalid escape/);
  });
});

describe("linear time", () => {
  // `^(a+)+$` against a run of `a` and a `!`: JavaScript's backtracking RegExp takes about 2^n steps (34 `a` froze a
  // process for minutes, issue 31), RE2 time proportional to n. The bounds below are seconds, for what takes
  // microseconds to milliseconds here and what a backtracking engine could not finish in years. Printed: the longest
  // single call (the longest the event loop can be held) and monitorEventLoopDelay's maximum; the per-call cost is a
  // benchmark (BENCHMARKS.md, `regex-match`).
  async function measureCalls(calls: readonly (() => void)[]): Promise<{ longestCallMs: number; maxDelayMs: number }> {
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    let longestCallMs = 0;
    for (const call of calls) {
      const started = performance.now();
      call();
      longestCallMs = Math.max(longestCallMs, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    delay.disable();
    return { longestCallMs, maxDelayMs: delay.max / 1e6 };
  }

  it("decides ^(a+)+$ against 34 `a` and a `!` (issue 31's pair) at once, 100 times", async () => {
    const regex = compileRegex("^(a+)+$");
    const rewrite = compileRewrite(regex, "x");
    const input = `${"a".repeat(34)}!`;
    const call = () => {
      expect(regex.fullMatch(input)).toBe(false);
      expect(regex.replaceAll(input, rewrite)).toBe(input);
    };
    const { longestCallMs, maxDelayMs } = await measureCalls(Array.from({ length: 100 }, () => call));
    console.info(
      `^(a+)+$, 34 a's and !: longest call ${longestCallMs.toFixed(2)} ms, event loop delay max ${maxDelayMs} ms`,
    );
    expect(longestCallMs).toBeLessThan(2_000);
  });

  it("stays linear on 100,000 `a` and a `!`, matching or not", async () => {
    const regex = compileRegex("^(a+)+$");
    const rewrite = compileRewrite(regex, "<\\1>");
    const long = `${"a".repeat(100_000)}!`;
    const { longestCallMs, maxDelayMs } = await measureCalls([
      () => expect(regex.fullMatch(long)).toBe(false),
      () => expect(regex.replaceAll(long, rewrite)).toBe(long),
      () => expect(regex.fullMatch(long.slice(0, -1))).toBe(true),
      () => expect(regex.replaceAll(long.slice(0, -1), rewrite) === `<${long.slice(0, -1)}>`).toBe(true),
    ]);
    console.info(
      `^(a+)+$, 100,000 a's: longest call ${longestCallMs.toFixed(1)} ms, event loop delay max ${maxDelayMs} ms`,
    );
    expect(longestCallMs).toBeLessThan(5_000);
  });

  it("runs the mesh layer's string and header matchers (RBAC, SAN checks, server routes) on the same engine", async () => {
    const input = `${"a".repeat(34)}!`;
    const string = compileStringMatcher({ type: "safe_regex", regex: "(a+)+", ignoreCase: false });
    const header = compileHeaderValueMatcher({ name: "x-user", invert: true, type: "safe_regex", regex: "(a+)+" });
    const { longestCallMs } = await measureCalls([
      () => expect(string(input)).toBe(false),
      () => expect(header(input)).toBe(true),
      () => expect(string(input.slice(0, -1))).toBe(true),
    ]);
    expect(longestCallMs).toBeLessThan(2_000);
  });
});
