// The compiled matchers (route-match.ts) against a straightforward reading of the rules (A28, A63), on random routes,
// paths and headers. The compiled side has fast paths (doubles for small ranges, lowercase prefixes, precompiled
// regexes); the reference has none.
import type { HeaderMatcher, PathMatcher, RouteMatch } from "@xdskit/xds-client";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileRouteMatch, findVirtualHost } from "../src/internal.js";
import { headerList, routeMatch, word } from "./support/route-arbitraries.js";

type HeaderList = readonly (readonly [string, string])[];

function referenceValue(headers: HeaderList, name: string): string | undefined {
  const lower = name.toLowerCase();
  if (lower.endsWith("-bin")) return undefined;
  if (lower === "content-type") return "application/grpc";
  const values = headers.filter(([key]) => key === lower).map(([, value]) => value);
  return values.length === 0 ? undefined : values.join(", ");
}

/** RE2 full match: the pattern must cover the whole value (named groups spelled `(?P<name>`). */
function fullMatch(regex: string, value: string, ignoreCase: boolean): boolean {
  return new RegExp(`^(?:${regex.replaceAll("(?P<", "(?<")})$`, ignoreCase ? "i" : "").test(value);
}

function referenceHeader(matcher: HeaderMatcher, headers: HeaderList): boolean {
  const value = referenceValue(headers, matcher.name);
  if (matcher.type === "present") return (value !== undefined) === matcher.present ? !matcher.invert : matcher.invert;
  // C-core and grpc-go: an absent header fails every matcher but `present`, `invert_match` or not.
  if (value === undefined) return false;
  let matched: boolean;
  switch (matcher.type) {
    case "safe_regex":
      matched = fullMatch(matcher.regex, value, false);
      break;
    case "range": {
      if (!/^[+-]?[0-9]+$/.test(value)) {
        matched = false;
        break;
      }
      const number = BigInt(value);
      matched = number >= -(2n ** 63n) && number < 2n ** 63n && number >= matcher.start && number < matcher.end;
      break;
    }
    default: {
      const have = matcher.ignoreCase ? value.toLowerCase() : value;
      const want = matcher.ignoreCase ? matcher.value.toLowerCase() : matcher.value;
      matched =
        matcher.type === "exact"
          ? have === want
          : matcher.type === "prefix"
            ? have.startsWith(want)
            : matcher.type === "suffix"
              ? have.endsWith(want)
              : have.includes(want);
    }
  }
  return matched !== matcher.invert;
}

function referencePath(matcher: PathMatcher, path: string): boolean {
  const fold = (text: string) => (matcher.caseSensitive ? text : text.toLowerCase());
  switch (matcher.type) {
    case "prefix":
      return fold(path).startsWith(fold(matcher.value));
    case "path":
      return fold(path) === fold(matcher.value);
    case "safe_regex":
      return fullMatch(matcher.regex, path, !matcher.caseSensitive);
  }
}

function referenceRoute(match: RouteMatch, path: string, headers: HeaderList, draw: number): boolean {
  if (!referencePath(match.path, path)) return false;
  if (!match.headers.every((header) => referenceHeader(header, headers))) return false;
  return match.fractionPerMillion === undefined || draw * 1_000_000 < match.fractionPerMillion;
}

describe("compileRouteMatch", () => {
  it("agrees with the reference on every route, path, header set and draw", () => {
    fc.assert(
      fc.property(
        routeMatch,
        fc.oneof(word, fc.constantFrom("/a/b", "/A/b", "/aB", "1")),
        headerList,
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        (match, path, list, draw) => {
          const headers = new Headers();
          for (const [name, value] of list) headers.append(name, value);
          expect(compileRouteMatch(match)(path, headers, () => draw)).toBe(referenceRoute(match, path, list, draw));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("never matches an absent header with a value matcher, inverted or not (C-core, grpc-go and our server)", () => {
    const inverted: RouteMatch = {
      path: { type: "prefix", value: "", caseSensitive: true },
      headers: [{ name: "x-h", invert: true, type: "exact", value: "a", ignoreCase: false }],
    };
    const matches = compileRouteMatch(inverted);
    expect(matches("/s/m", new Headers(), Math.random)).toBe(false);
    expect(matches("/s/m", new Headers({ "x-h": "b" }), Math.random)).toBe(true);
    expect(matches("/s/m", new Headers({ "x-h": "a" }), Math.random)).toBe(false);
  });

  it("reads a range header beyond 2^53 exactly and refuses values outside int64", () => {
    const match: RouteMatch = {
      path: { type: "prefix", value: "", caseSensitive: true },
      headers: [{ name: "n", invert: false, type: "range", start: 9007199254740993n, end: 9007199254740995n }],
    };
    const matches = compileRouteMatch(match);
    const call = (value: string) => matches("/s/m", new Headers({ n: value }), Math.random);
    expect(call("9007199254740993")).toBe(true);
    expect(call("9007199254740992")).toBe(false);
    expect(call("9007199254740995")).toBe(false);
    expect(
      compileRouteMatch({
        ...match,
        headers: [{ ...match.headers[0]!, start: 0n, end: 2n ** 63n - 1n } as HeaderMatcher],
      })("/", new Headers({ n: "9223372036854775808" }), Math.random),
    ).toBe(false);
  });
});

describe("findVirtualHost", () => {
  const hosts = [
    { name: "any", domains: ["*"] },
    { name: "prefix", domains: ["echo*"] },
    { name: "suffix", domains: ["*.example.com", "*ho"] },
    { name: "exact", domains: ["echo"] },
  ];
  it("prefers exact, then suffix, then prefix, then *; case-insensitive", () => {
    expect(hosts[findVirtualHost("ECHO", hosts)]!.name).toBe("exact");
    expect(hosts[findVirtualHost("gecho", hosts)]!.name).toBe("suffix");
    expect(hosts[findVirtualHost("echo2", hosts)]!.name).toBe("prefix");
    expect(hosts[findVirtualHost("other", hosts)]!.name).toBe("any");
  });
  it("prefers the longer pattern of one kind, and reports no match", () => {
    const two = [{ domains: ["*.com"] }, { domains: ["*.example.com"] }];
    expect(findVirtualHost("a.example.com", two)).toBe(1);
    expect(findVirtualHost("a.org", two)).toBe(-1);
  });
});
