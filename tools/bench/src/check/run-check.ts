// The regression guard (issue 37): the ratio rows of BENCHMARKS.md's issue-37 table at small sizes, each against its
// committed value in tools/bench/check-baseline.json; fails (exit 1) when a ratio is more than 1.5x its committed
// value. Ratios are taken within one run (both sides measured in the same minute), the client rows on CPU time, so a
// busy machine moves them far less than wall-clock figures; still, it is too noisy for `npm test` and is run by hand:
//
//   node tools/bench/dist/run-all.js --check            (or: node tools/bench/dist/check/run-check.js)
//   node tools/bench/dist/check/run-check.js --update   writes the measured ratios as the committed values
//   node tools/bench/dist/check/run-check.js <row> ...  runs the named rows only
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { measureClientCase } from "../lib/client-cpu.js";
import { int, printTable, ratio } from "../lib/table.js";
import { edsDecodeRatio } from "./eds-decode.js";

const here = dirname(fileURLToPath(import.meta.url));
const baselineFile = join(here, "..", "..", "check-baseline.json");
/** A ratio fails past this multiple of its committed value. */
const TOLERANCE = 1.5;
/** Resources per client case: a fifth of the table's 10,000. */
const COUNT = 2_000;
const ROUNDS = 9;

interface Row {
  readonly name: string;
  readonly what: string;
  measure(): Promise<number>;
}

async function clientRatio(a: Parameters<typeof measureClientCase>[0], b: Parameters<typeof measureClientCase>[0]) {
  const first = await measureClientCase(a, { rounds: ROUNDS, count: COUNT });
  const second = await measureClientCase(b, { rounds: ROUNDS, count: COUNT });
  return first.cpu / second.cpu;
}

/** The ratio column of the row labelled `label` in a benchmark's table, run at the small sizes. */
function tableRatio(script: string, args: readonly string[], label: string): number {
  const result = spawnSync(process.execPath, [join(here, "..", script), ...args], {
    encoding: "utf8",
    env: { ...process.env, XDSKIT_BENCH_SMALL: "1" },
    maxBuffer: 16 * 1024 * 1024,
  });
  if (result.status !== 0) throw new Error(`${script} failed: ${result.stderr}`);
  const line = result.stdout.split("\n").find((l) => l.startsWith(`| ${label} `));
  const cell = line?.split("|").at(-2)?.trim();
  if (cell === undefined || !cell.endsWith("x")) throw new Error(`${script}: no row "${label}" in\n${result.stdout}`);
  return Number(cell.slice(0, -1));
}

const ROWS: readonly Row[] = [
  {
    name: "delta-full-vs-sotw-full",
    what: `client CPU: delta response of ${int(COUNT)} changed clusters / the same in SotW`,
    measure: () => clientRatio("delta-full", "sotw-full"),
  },
  {
    name: "sotw-one-vs-full",
    what: `client CPU: SotW re-push of ${int(COUNT)} clusters, one changed / all changed`,
    measure: () => clientRatio("sotw-one", "sotw-full"),
  },
  {
    name: "eds-watched-vs-cds",
    what: `client CPU: ${int(COUNT)} EDS resources, each watched, all changed / ${int(COUNT)} clusters`,
    measure: () => clientRatio("eds-watched", "sotw-full"),
  },
  {
    name: "eds-decode-vs-frombinary",
    what: "CPU: one EDS resource of 1,000 endpoints, decode + validate / protobuf-es fromBinary",
    measure: async () => edsDecodeRatio(1_000),
  },
  {
    name: "cp-delta-first-change",
    what: "control plane: first delta change to 100 streams (1,000 clusters) / pre-encoded baseline",
    measure: async () =>
      tableRatio(
        "control-plane-fanout.js",
        ["delta", "100"],
        "1 cluster changes: every stream has the changed cluster",
      ),
  },
  {
    name: "tp2-sotw-later",
    what: "control plane: one TP2 variant change, SotW, later changes (1,000 variants, 100 streams) / baseline",
    measure: async () => tableRatio("control-plane-variants.js", ["sotw"], "  (later changes, median of 7)"),
  },
  {
    name: "tp2-delta-later",
    what: "control plane: one TP2 variant change, delta, later changes (1,000 variants, 100 streams) / baseline",
    measure: async () => tableRatio("control-plane-variants.js", ["delta"], "  (later changes, median of 7)"),
  },
];

const args = process.argv.slice(2);
const update = args.includes("--update");
const asked = args.filter((a) => !a.startsWith("--"));
const unknown = asked.filter((name) => !ROWS.some((row) => row.name === name));
if (unknown.length > 0) throw new Error(`unknown row ${unknown.join(", ")}: ${ROWS.map((r) => r.name).join(", ")}`);
const committed = JSON.parse(readFileSync(baselineFile, "utf8")) as { ratios: Record<string, number> };
const measured: Record<string, number> = {};
const table: string[][] = [];
let failed = 0;
for (const row of ROWS) {
  if (asked.length > 0 && !asked.includes(row.name)) continue;
  const value = await row.measure();
  measured[row.name] = value;
  const base = committed.ratios[row.name];
  const limit = base === undefined ? undefined : base * TOLERANCE;
  const ok = limit === undefined || value <= limit;
  if (!ok) failed++;
  table.push([
    row.name,
    row.what,
    ratio(value),
    base === undefined ? "-" : ratio(base),
    limit === undefined ? "-" : ratio(limit),
    ok ? "ok" : "FAIL",
  ]);
}
printTable(
  `regression check: each ratio against ${TOLERANCE}x its value in check-baseline.json`,
  ["row", "what", "measured", "committed", "limit", ""],
  table,
);
if (update) {
  const ratios = { ...committed.ratios };
  for (const [name, value] of Object.entries(measured)) ratios[name] = Math.round(value * 100) / 100;
  writeFileSync(baselineFile, `${JSON.stringify({ ...committed, ratios }, null, 2)}\n`);
  process.stdout.write(`\nwrote ${baselineFile}\n`);
}
process.exit(failed === 0 || update ? 0 : 1);
