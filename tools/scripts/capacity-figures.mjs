#!/usr/bin/env node
// The figures of packages/control-plane/README.md's Capacity section come from one place, BENCHMARKS.md: this
// script reads its `control-plane-fanout` and `relay-tier` tables and writes the README's two generated blocks
// (between `<!-- capacity:NAME:begin -->` and `<!-- capacity:NAME:end -->`). `npm test` runs its check (a test in
// tools/scripts), so a new BENCHMARKS.md run that moves a figure fails until `node
// tools/scripts/capacity-figures.mjs --write` is run and the README committed.
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));
export const README = join(root, "packages", "control-plane", "README.md");
export const BENCHMARKS = join(root, "BENCHMARKS.md");

/** The tables of one `### \`name\`` section: caption (the line above the table) → row label → cells. */
export function sectionTables(markdown, name) {
  const start = markdown.indexOf(`### \`${name}\``);
  if (start < 0) throw new Error(`BENCHMARKS.md has no ### \`${name}\` section`);
  const end = markdown.indexOf("\n### ", start + 4);
  const lines = markdown.slice(start, end < 0 ? undefined : end).split("\n");
  const tables = new Map();
  let caption = "";
  let rows;
  for (const line of lines) {
    if (!line.startsWith("|")) {
      rows = undefined;
      if (line.trim() !== "") caption = line.trim();
      continue;
    }
    const cells = line
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.trim());
    if (cells.every((cell) => /^:?-+:?$/.test(cell))) continue;
    if (rows === undefined) {
      rows = new Map();
      tables.set(caption, rows);
      rows.set("", cells); // the header
    } else rows.set(cells[0], cells.slice(1));
  }
  return tables;
}

function table(tables, captionStart) {
  for (const [caption, rows] of tables) if (caption.startsWith(captionStart)) return { caption, rows };
  throw new Error(`no table captioned "${captionStart}..." in BENCHMARKS.md`);
}

function cells(rows, label) {
  const found = rows.get(label);
  if (!found) throw new Error(`no row "${label}" in BENCHMARKS.md`);
  return found;
}

const number = (text) => Number(String(text).replace(/[^\d.]/g, ""));
const withCommas = (n) => Math.round(n).toLocaleString("en-US");

/** 565 ms as `0.57 s`, 5,127 ms as `5.1 s` (two significant digits). */
function seconds(msText) {
  const value = number(msText);
  // Rounded on whole milliseconds: 565 ms is 0.57 s (565 / 1000 is 0.56499... in binary).
  return value < 1000
    ? `${(Math.round(value / 10) / 100).toFixed(2)} s`
    : `${(Math.round(value / 100) / 10).toFixed(1)} s`;
}

const ms = (msText) => `${withCommas(number(msText))} ms`;
const mb = (mbText) => `${withCommas(number(mbText))} MB`;

/** The run BENCHMARKS.md reports: its date and commit. */
export function runOf(markdown) {
  const commit = /- Code: `main` at commit `([0-9a-f]+)`/.exec(markdown)?.[1];
  const date = /- Date: (\d{4}-\d\d-\d\d)/.exec(markdown)?.[1];
  if (!commit || !date) throw new Error("BENCHMARKS.md's run section has no `Code:` commit or `Date:`");
  return { commit, date };
}

export function fanoutBlock(markdown) {
  const tables = sectionTables(markdown, "control-plane-fanout");
  const t = (protocol, streams) =>
    table(tables, `control plane fan-out, ${protocol}: 10,000 clusters to ${streams} streams`).rows;
  const [s100, s1k, d100, d1k] = [t("SotW", "100"), t("SotW", "1,000"), t("delta", "100"), t("delta", "1,000")];
  const full = "every stream has the full CDS (slowest)";
  const cell = (rows, label, format) => {
    const [ours, , ratio] = cells(rows, label);
    return `${format(ours)} (${ratio}${format === seconds && rows === s100 && label === full ? " grpc-js" : ""})`;
  };
  const pair = (rowsA, rowsB, label, format) => {
    const [a, , ra] = cells(rowsA, label);
    const [b, , rb] = cells(rowsB, label);
    return `${number(a)} / ${format(b)} (${ra} / ${rb})`;
  };
  const { commit, date } = runOf(markdown);
  const rows = [
    ["SotW: every stream has the full state", (r) => cell(r.sotw, full, seconds)],
    [
      "SotW: one cluster changes, every stream has the new full state",
      (r) => cell(r.sotw, "1 cluster changes: every stream has the new full CDS", seconds),
    ],
    ["delta: every stream has the full state", (r) => cell(r.delta, full, seconds)],
    [
      "delta: the first change after start-up, every stream has it",
      (r) => cell(r.delta, "1 cluster changes: every stream has the changed cluster", ms),
    ],
    ["delta: later changes, median of 5", (r) => cell(r.delta, "(later changes, median of 5)", ms)],
    ["server RSS, peak, SotW / delta", (r) => pair(r.sotw, r.delta, "server RSS peak", mb)],
    ["server heap after a GC, at the end, SotW / delta", (r) => pair(r.sotw, r.delta, "(after a forced GC)", mb)],
  ];
  const at100 = { sotw: s100, delta: d100 };
  const at1k = { sotw: s1k, delta: d1k };
  const peak1k = Math.max(number(cells(s1k, "server RSS peak")[0]), number(cells(d1k, "server RSS peak")[0]));
  const push1k = seconds(cells(s1k, "1 cluster changes: every stream has the new full CDS")[0]);
  return [
    `Measured with \`tools/bench\` (\`pnpm turbo run build --filter=@xdskit/bench...\`, then`,
    `\`node tools/bench/dist/control-plane-fanout.js\`; this table is the root \`BENCHMARKS.md\`'s full run of ${date} on`,
    `\`${commit}\`, which also says how much these ratios vary between runs) on a 2-core machine, Node 20, one control-plane`,
    "process, clients in another, each stream its own HTTP/2 connection and a wildcard CDS subscription to 10,000 clusters",
    "(a full state of about 1 MB). Beside it, in the same run, a grpc-js server that writes one pre-encoded response to",
    "every stream:",
    "",
    "| | 100 streams | 1,000 streams |",
    "|---|---:|---:|",
    ...rows.map(([label, value]) => `| ${label} | ${value(at100)} | ${value(at1k)} |`),
    "",
    "The first change after start-up runs code paths the initial load never ran (replacing an entry, the change log, a",
    "response of one resource). The first ADS stream of each protocol in a process therefore starts a warm-up: a private",
    "server with no listener runs those paths 50 times over two streams of its own, 20-50 ms of CPU once, a millisecond",
    "at a time between the server's real work (nothing of it is visible: docs/decisions.md, \"Control plane: warming the",
    "change paths\"). A TP2 variant change's first push then costs the server's main thread about 0.8 ms instead of about",
    "2 ms, and a later one about 0.7 ms, against about 0.4 ms for a server that only writes a pre-encoded response.",
    "",
    "A response is encoded once for all the streams it goes to, and a stream holds its subscription and a reference to",
    "what its client holds, so memory grows with the number of distinct states, not with streams times bytes sent: 1,000",
    `streams of 10,000 clusters fit in about ${withCommas(Math.round(peak1k / 10) * 10)} MB. What bounds one process is the bytes it writes: a SotW push of a`,
    `full-state type sends the whole state to every stream (1,000 streams x 1 MB is ${push1k} in that run), while a delta`,
    "push sends what changed. Up to about 1,000 streams x 10,000 resources per process, a change reaches every client in",
    "seconds with SotW and in well under a second with delta; more than that was not measured here.",
  ].join("\n");
}

export function relayBlock(markdown) {
  const tables = sectionTables(markdown, "relay-tier");
  const tier = table(tables, "relay tier:").rows;
  const relays = table(tables, "the relays:");
  const hops = table(tables, "hop latency:").rows;
  const [fillRelays, fillDirect, fillRatio] = cells(tier, "every stream has its 100 clusters (slowest)");
  const [changeRelays, changeDirect] = cells(tier, "cluster-0 changes: every stream has it (slowest)");
  const [streamsRelays, streamsDirect] = cells(tier, "streams on the control plane");
  const [rssRelays, rssDirect] = cells(tier, "control plane RSS");
  const relayRows = [...relays.rows].filter(([label]) => label.startsWith("relay "));
  const mean = (column) => relayRows.reduce((sum, [, c]) => sum + number(c[column]), 0) / relayRows.length;
  const header = relays.rows.get("").slice(1);
  const perCluster = mean(header.indexOf("heap per cached cluster"));
  const perStream = mean(header.indexOf("heap per stream"));
  const upstream = /upstream, (\d+) streams received \d+ responses, ([\d.]+) MB/.exec(relays.caption);
  if (!upstream) throw new Error("the relays' caption no longer says what the upstream streams received");
  const perRelay = number(upstream[2]) / number(upstream[1]);
  const hop = cells(hops, "through one relay")[2];
  const { commit, date } = runOf(markdown);
  const fillRatioValue = number(fillRatio);
  return [
    "- A caching relay tier, as TP2 describes it: [`@xdskit/xds-relay`](../xds-relay) (or `xdskit relay`) is a client",
    "  of this server and a server to a share of the fleet, re-serving the same state keyed by the dynamic parameters",
    "  its clients send, through one upstream stream per relay. `tools/bench` (`node tools/bench/dist/relay-tier.js`;",
    `  the root \`BENCHMARKS.md\`'s full run of ${date} on \`${commit}\`, every process on one 2-core machine) put 10,000 delta`,
    "  streams, each subscribed to 100 of 10,000 clusters, behind 4 relays:",
    "",
    "  | | through 4 relays | this server directly |",
    "  |---|---:|---:|",
    `  | streams on this server | ${streamsRelays} | ${streamsDirect} |`,
    `  | this server's RSS | ${mb(rssRelays)} | ${mb(rssDirect)} |`,
    `  | bytes this server sent | ${perRelay.toFixed(2)} MB per relay, whatever its number of clients | every client's share |`,
    `  | one change reaches every stream (slowest) | ${ms(changeRelays)} | ${ms(changeDirect)} |`,
    `  | latency a relay adds (p50 per hop) | ${hop} | |`,
    `  | relay memory | about ${Math.round(perStream)} KB per stream of 100 subscriptions, ${perCluster.toFixed(1)} KB per cached cluster | |`,
    "",
    "  On one machine the tier cannot add cores, so a change takes about as long as from one server; spread over",
    "  machines, each relay carries its share of the streams while this server carries one stream per relay. A cold",
    `  relay takes longer than this server to fill its first clients (${seconds(fillRelays)} against ${seconds(fillDirect)}, ${fillRatioValue.toFixed(2)}x, in that`,
    "  run): it asks upstream as they subscribe.",
  ].join("\n");
}

const BLOCKS = { fanout: fanoutBlock, relay: relayBlock };

/** The README with each generated block made from `benchmarks`. */
export function renderReadme(readme, benchmarks) {
  let text = readme;
  for (const [name, make] of Object.entries(BLOCKS)) {
    const begin = `<!-- capacity:${name}:begin (generated from BENCHMARKS.md: node tools/scripts/capacity-figures.mjs --write) -->`;
    const end = `<!-- capacity:${name}:end -->`;
    const from = text.indexOf(begin);
    const to = text.indexOf(end);
    if (from < 0 || to < from) throw new Error(`README has no ${begin} ... ${end} block`);
    text = `${text.slice(0, from + begin.length)}\n${make(benchmarks)}\n${text.slice(to)}`;
  }
  return text;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const readme = readFileSync(README, "utf8");
  const next = renderReadme(readme, readFileSync(BENCHMARKS, "utf8"));
  if (process.argv.includes("--write")) {
    writeFileSync(README, next);
    process.stdout.write(next === readme ? "up to date\n" : "packages/control-plane/README.md rewritten\n");
  } else if (next !== readme) {
    process.stderr.write("packages/control-plane/README.md's Capacity figures differ from BENCHMARKS.md: run\n");
    process.stderr.write("  node tools/scripts/capacity-figures.mjs --write\n");
    process.exit(1);
  }
}
