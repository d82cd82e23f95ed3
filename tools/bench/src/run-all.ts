// Runs every benchmark in dist/ (each top-level .js file except this one), one process each, in name order. Arguments
// (`--quick`: smaller sizes, where a benchmark supports it) are passed to each. `--check` runs the regression guard
// instead (check/run-check.ts).
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
if (process.argv.includes("--check")) {
  // The regression guard (check/run-check.ts) instead of the benchmarks.
  const args = process.argv.slice(2).filter((a) => a !== "--check");
  const check = spawnSync(process.execPath, [join(here, "check", "run-check.js"), ...args], { stdio: "inherit" });
  process.exit(check.status ?? 1);
}
const self = basename(fileURLToPath(import.meta.url));
const files = readdirSync(here)
  .filter((f) => f.endsWith(".js") && f !== self)
  .sort();
let failed = 0;
for (const file of files) {
  process.stdout.write(`\n=== ${file}\n`);
  const result = spawnSync(process.execPath, [join(here, file), ...process.argv.slice(2)], { stdio: "inherit" });
  if (result.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
