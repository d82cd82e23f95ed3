// The cost of a regular expression from xDS per call, and to compile: @xdskit/xds-client's engine (re2js: RE2
// semantics, linear time) beside JavaScript's backtracking RegExp (what connect-xds ran before) and
// @grpc/grpc-js-xds's SafeRegexValueMatcher (Google's RE2 built to WebAssembly, re2-wasm), the same patterns and
// inputs in the same run. RegExp's row for the pathological pair is not run: it does not finish. Last, the longest
// one match holds the event loop on a 64 KiB value.
import { createRequire } from "node:module";
import { compileRegex } from "@xdskit/xds-client/internal";
import { consume, opsPerSecond } from "./lib/measure.js";
import { printTable, ratio } from "./lib/table.js";

const require = createRequire(import.meta.url);
require("@grpc/grpc-js-xds");
const peer = require("@grpc/grpc-js-xds/build/src/matcher") as {
  SafeRegexValueMatcher: new (regex: string) => { apply(value: string): boolean };
};

const quick = process.argv.includes("--quick");
const options = quick ? { sampleMs: 50, samples: 3 } : { sampleMs: 200, samples: 5 };

interface Case {
  readonly name: string;
  readonly pattern: string;
  readonly input: string;
  /** Backtracking cannot finish it: RegExp is left out. */
  readonly pathological?: boolean;
}

const cases: readonly Case[] = [
  {
    name: "route path, matching",
    pattern: "/echo\\.v1\\.Echo/(Unary|Stream)[A-Za-z]*",
    input: "/echo.v1.Echo/UnaryCall",
  },
  {
    name: "route path, not matching",
    pattern: "/echo\\.v1\\.Echo/(Unary|Stream)[A-Za-z]*",
    input: "/other.v1.Svc/Get",
  },
  {
    name: "header, a UUID",
    pattern: "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    input: "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  },
  { name: "header, a user-agent prefix", pattern: "grpc-(node|go|java)/.*", input: "grpc-node/1.14.1 grpc-c/42" },
  { name: "(a+)+ on 34 a and !", pattern: "(a+)+", input: `${"a".repeat(34)}!`, pathological: true },
];

const ns = (opsPerSec: number) => (1e9 / opsPerSec).toFixed(0);
const rows: string[][] = [];
for (const c of cases) {
  const ours = compileRegex(c.pattern);
  const theirs = new peer.SafeRegexValueMatcher(c.pattern);
  const js = new RegExp(`^(?:${c.pattern})$`);
  if (ours.fullMatch(c.input) !== theirs.apply(c.input)) throw new Error(`the engines disagree on ${c.name}`);
  const oursRate = opsPerSecond((i) => consume(ours.fullMatch(i < 0 ? "" : c.input)), options);
  const theirRate = opsPerSecond((i) => consume(theirs.apply(i < 0 ? "" : c.input)), options);
  const jsRate =
    c.pathological === true ? undefined : opsPerSecond((i) => consume(js.test(i < 0 ? "" : c.input)), options);
  rows.push([
    c.name,
    ns(oursRate),
    jsRate === undefined ? "does not finish" : ns(jsRate),
    ns(theirRate),
    jsRate === undefined ? "-" : ratio(jsRate / oursRate),
    ratio(theirRate / oursRate),
  ]);
}
printTable(
  "Full match per call, ns (median of samples): xds-client's engine (re2js) beside RegExp and grpc-js-xds's re2-wasm",
  ["case", "xdskit ns", "RegExp ns", "grpc-js-xds ns", "xdskit / RegExp", "xdskit / grpc-js-xds"],
  rows,
);

// Compiling: each pattern made unique so that no cache answers (xds-client compiles a pattern once per process). A
// fixed count: re2-wasm keeps every compiled pattern in its WebAssembly heap until the process ends.
const COMPILES = quick ? 200 : 1_000;
const compilePattern = "/echo\\.v1\\.Echo/(Unary|Stream)[A-Za-z]*";
function compileMicros(compile: (pattern: string) => unknown, tag: string): number {
  for (let i = 0; i < 50; i++) consume(compile(`${compilePattern}${tag}w${i}`));
  const start = performance.now();
  for (let i = 0; i < COMPILES; i++) consume(compile(`${compilePattern}${tag}${i}`));
  return ((performance.now() - start) * 1000) / COMPILES;
}
const oursCompile = compileMicros((p) => compileRegex(p), "x");
const jsCompile = compileMicros((p) => new RegExp(`^(?:${p})$`), "j");
const theirCompile = compileMicros((p) => new peer.SafeRegexValueMatcher(p), "g");
printTable(
  `Compiling a route regex, µs (mean of ${COMPILES})`,
  ["xdskit µs", "RegExp µs", "grpc-js-xds µs", "xdskit / RegExp", "xdskit / grpc-js-xds"],
  [
    [
      oursCompile.toFixed(1),
      jsCompile.toFixed(1),
      theirCompile.toFixed(1),
      ratio(oursCompile / jsCompile),
      ratio(oursCompile / theirCompile),
    ],
  ],
);

// The longest one match holds the event loop, on the largest value a call can bring: a header list of 64 KiB
// (HTTP/2's SETTINGS_MAX_HEADER_LIST_SIZE as Node sets it by default), all of it one header value, against patterns
// a backtracking engine cannot finish. Goal (issue 31): no regex stalls the loop past 10 ms. The maximum of single
// timed matches, each the whole stall it causes (matching is synchronous).
const STALL_RUNS = quick ? 5 : 20;
const longValue = `${"a".repeat(64 * 1024 - 1)}!`;
const stallCases: readonly { readonly name: string; readonly pattern: string }[] = [
  { name: "(a+)+ on 64 KiB of a and !", pattern: "(a+)+" },
  { name: "(([a-zA-Z./]+)+)+Z on the same", pattern: "(([a-zA-Z./]+)+)+Z" },
  { name: "(a|aa)*b on the same", pattern: "(a|aa)*b" },
];
function worstStallMs(match: (value: string) => boolean): number {
  consume(match(longValue));
  let worst = 0;
  for (let i = 0; i < STALL_RUNS; i++) {
    const start = performance.now();
    consume(match(longValue));
    worst = Math.max(worst, performance.now() - start);
  }
  return worst;
}
const stallRows: string[][] = [];
for (const c of stallCases) {
  const ours = compileRegex(c.pattern);
  const theirs = new peer.SafeRegexValueMatcher(c.pattern);
  if (ours.fullMatch(longValue) || theirs.apply(longValue)) throw new Error(`${c.name} matched`);
  const oursMs = worstStallMs((v) => ours.fullMatch(v));
  const theirMs = worstStallMs((v) => theirs.apply(v));
  stallRows.push([c.name, oursMs.toFixed(2), "does not finish", theirMs.toFixed(2), ratio(theirMs / oursMs)]);
}
printTable(
  `The longest stall of one match on a 64 KiB header value, ms (max of ${STALL_RUNS}; goal < 10 ms)`,
  ["case", "xdskit ms", "RegExp ms", "grpc-js-xds ms", "grpc-js-xds / xdskit"],
  stallRows,
);
