import { describe, expect, it } from "vitest";
import {
  and,
  canonicalText,
  equals,
  exists,
  FALSE,
  fromText,
  not,
  or,
  range,
  TRUE,
  toText,
  value,
} from "../src/index.js";

describe("fromText", () => {
  it("parses the issue's example with ! > && > ||", () => {
    expect(fromText("env=prod && (version=v1 || !exists(canary))")).toEqual(
      and([value("env", "prod"), or([value("version", "v1"), not(exists("canary"))])]),
    );
    expect(fromText("a=1 || b=2 && !c=3")).toEqual(or([value("a", "1"), and([value("b", "2"), not(value("c", "3"))])]));
    expect(fromText("!a=1 && b=2")).toEqual(and([not(value("a", "1")), value("b", "2")]));
    expect(fromText("!(a=1 && b=2)")).toEqual(not(and([value("a", "1"), value("b", "2")])));
  });

  it("keeps parenthesised groups as nested nodes and chains as flat ones", () => {
    expect(fromText("a=1 && b=2 && c=3")).toEqual(and([value("a", "1"), value("b", "2"), value("c", "3")]));
    expect(fromText("(a=1 && b=2) && c=3")).toEqual(and([and([value("a", "1"), value("b", "2")]), value("c", "3")]));
  });

  it("reads ranges, single points, sugar and constants", () => {
    expect(fromText("shard in [1..10, 20..30]")).toEqual(range("shard", [1n, 10n], [20n, 30n]));
    expect(fromText("shard in [ 7 ]")).toEqual(range("shard", [7n, 7n]));
    expect(fromText("n in [0..18446744073709551615]")).toEqual(range("n", [0n, 0xffff_ffff_ffff_ffffn]));
    expect(fromText("env != prod")).toEqual(not(value("env", "prod")));
    expect(fromText("true")).toBe(TRUE);
    expect(equals(fromText("!true"), FALSE)).toBe(true);
    expect(fromText("use_proxy=true")).toEqual(value("use_proxy", "true"));
    expect(fromText("  xds.version.minor  =  5 ")).toEqual(value("xds.version.minor", "5"));
  });

  it("reads quoted keys and values with escapes", () => {
    expect(fromText('"odd key"="a \\"b\\" \\\\ \\n \\u0001"')).toEqual(value("odd key", 'a "b" \\ \n \u0001'));
    expect(fromText('shards="[4-6],[11-15],[46-90]"')).toEqual(value("shards", "[4-6],[11-15],[46-90]"));
    expect(fromText('"true"=x && exists("in")')).toEqual(and([value("true", "x"), exists("in")]));
    expect(fromText('""=""')).toEqual(value("", ""));
  });
});

describe("toText", () => {
  it("prints the syntax it parses", () => {
    const e = and([value("env", "prod"), or([value("version", "v1"), not(exists("canary"))])]);
    expect(toText(e)).toBe("env=prod && (version=v1 || !exists(canary))");
    expect(toText(range("shard", [1n, 10n], [20n, 20n]))).toBe("shard in [1..10, 20]");
    expect(toText(not(not(value("a", "1"))))).toBe("!!a=1");
    expect(toText(not(or([value("a", "1"), value("b", "2")])))).toBe("!(a=1 || b=2)");
    expect(toText(FALSE)).toBe("!true");
  });

  it("quotes odd keys and values, and reserved words used as keys only", () => {
    expect(toText(value("odd key", 'q"\n'))).toBe('"odd key"="q\\"\\n"');
    expect(toText(value("in", "true"))).toBe('"in"=true');
    expect(toText(exists("exists"))).toBe('exists("exists")');
    expect(toText(value("", ""))).toBe('""=""');
    expect(toText(value("k", "\u007f"))).toBe('k="\\u007f"');
  });
});

describe("canonicalText", () => {
  it("sorts, flattens, deduplicates and removes double negation", () => {
    const a = fromText("(version=v1 || !!version=v2) && env=prod && env=prod");
    const b = fromText("env=prod && (version=v2 || version=v1)");
    expect(canonicalText(a)).toBe("env=prod && (version=v1 || version=v2)");
    expect(canonicalText(b)).toBe(canonicalText(a));
    expect(canonicalText(fromText("a=1 && (b=2 && (c=3 && a=1))"))).toBe("a=1 && b=2 && c=3");
  });

  it("merges ranges and simplifies the constants", () => {
    expect(canonicalText(fromText("s in [20..30, 1..10, 11..12, 5]"))).toBe("s in [1..12, 20..30]");
    expect(canonicalText(fromText("a=1 && true"))).toBe("a=1");
    expect(canonicalText(fromText("a=1 || true"))).toBe("true");
    expect(canonicalText(fromText("a=1 && !true"))).toBe("!true");
    expect(canonicalText(fromText("a=1 || !true"))).toBe("a=1");
  });
});
