// @xdskit/constraint-matcher: evaluations per second (interpreted vs compiled) and select latency (indexed vs a
// linear scan over compiled matchers, measured in the same run).
import {
  canonicalText,
  compile,
  createVariantIndex,
  type Expr,
  fromDraft,
  fromText,
  type Matcher,
  matches,
  type Params,
  specificity,
} from "@xdskit/constraint-matcher";
import { consume, opsPerSecond, sink } from "./lib/measure.js";
import { int, printTable, ratio } from "./lib/table.js";

const PARAMS: Readonly<Record<string, string>> = {
  env: "prod",
  version: "v1",
  region: "us-east1",
  zone: "us-east1-b",
  shards: "47",
  "xds.version.minor": "4",
  listener_type: "direct",
  build: "2024.06.1",
};
const PARAMS_MAP: Params = new Map(Object.entries(PARAMS));

const EXPRESSIONS: [string, Expr][] = [
  ["env=prod", fromText("env=prod")],
  ["3 exact values", fromText("env=prod && version=v1 && zone=us-east1-b")],
  ["issue example", fromText("env=prod && (version=v1 || !exists(canary))")],
  ["not-exists default", fromText("!exists(canary) && !exists(version_next) && env=prod")],
  [
    "draft: shard ranges",
    fromDraft({
      shards: {
        constraints: [
          {
            integer_range_list: [
              { min_value: 4, max_value: 6 },
              { min_value: 11, max_value: 15 },
              { min_value: 46, max_value: 90 },
            ],
          },
        ],
      },
    }),
  ],
  [
    "draft: invert route row",
    fromDraft({
      env: { constraints: [{ value: "prod" }], invert: true },
      version: { constraints: [{ value: "v1" }] },
    }),
  ],
  [
    "nested or/and/not (5 keys)",
    fromText("(env=prod || env=canary) && !(region=eu-west1 && zone=eu-west1-a) && (exists(build) || version=v2)"),
  ],
];

function evaluationTable(): void {
  const rows = EXPRESSIONS.map(([name, e]) => {
    const m = compile(e);
    const interpreted = opsPerSecond(() => consume(matches(e, PARAMS)));
    const compiled = opsPerSecond(() => consume(m(PARAMS)));
    const compiledMap = opsPerSecond(() => consume(m(PARAMS_MAP)));
    return [name, int(interpreted), int(compiled), ratio(compiled / interpreted), int(compiledMap)];
  });
  printTable(
    "evaluations per second (params: plain object with 8 keys; last column: the same as a Map)",
    ["expression", "matches()", "compile()", "compiled/interp.", "compile() on Map"],
    rows,
  );
}

interface ScanEntry {
  readonly matcher: Matcher;
  readonly specificity: number;
  readonly text: string;
  readonly value: number;
}

/** The baseline: every variant's compiled matcher run in turn, then the most specific match picked. */
function linearSelect(entries: readonly ScanEntry[], params: Params): ScanEntry | undefined {
  let best: ScanEntry | undefined;
  for (const e of entries) {
    if (!e.matcher(params)) continue;
    if (
      best === undefined ||
      e.specificity > best.specificity ||
      (e.specificity === best.specificity && e.text < best.text)
    ) {
      best = e;
    }
  }
  return best;
}

function selectTable(): void {
  const QUERIES = 1024;
  const sizes = [10, 1_000, 10_000];
  const results = sizes.map((n) => {
    const index = createVariantIndex<number>();
    const entries: ScanEntry[] = [];
    for (let i = 0; i < n; i++) {
      const e = fromText(`shard_id=s${i} && env=${i % 2 === 0 ? "prod" : "test"}`);
      index.add(e, i);
      entries.push({ matcher: compile(e), specificity: specificity(e), text: canonicalText(e), value: i });
    }
    // One query in eight misses (an unknown shard); the rest hit a variant spread over the whole range.
    const queries = Array.from({ length: QUERIES }, (_, q) => {
      const i = (q * 7919) % n;
      const shard = q % 8 === 0 ? `missing${q}` : `s${i}`;
      return { ...PARAMS, shard_id: shard, env: i % 2 === 0 ? "prod" : "test" };
    });
    for (const q of queries) {
      if (index.select(q)?.variant.value !== linearSelect(entries, q)?.value)
        throw new Error("index and scan disagree");
    }
    const indexed = opsPerSecond((k) => consume(index.select(queries[k & (QUERIES - 1)]!)));
    const scanned = opsPerSecond((k) => consume(linearSelect(entries, queries[k & (QUERIES - 1)]!)), {
      sampleMs: n >= 10_000 ? 400 : 200,
    });
    return { n, indexed, scanned, stats: index.stats() };
  });
  const base = results[0]!;
  printTable(
    "select latency, exact-value variants `shard_id=sN && env=...` (1 in 8 queries misses)",
    ["variants", "indexed ns/select", "linear scan ns/select", "scan/indexed", "indexed latency vs 10 variants"],
    results.map((r) => [
      `${int(r.n)} (${r.stats.indexed} indexed, ${r.stats.scanned} scanned)`,
      (1e9 / r.indexed).toFixed(0),
      (1e9 / r.scanned).toFixed(0),
      ratio(r.indexed / r.scanned),
      ratio(base.indexed / r.indexed),
    ]),
  );
}

evaluationTable();
selectTable();
process.stdout.write(`\n(sink ${sink > 0 ? "ok" : "empty"})\n`);
