#!/usr/bin/env node
// The two commands of the README: `npm test` and `npm run demo`.
// Works on a machine with only Node 20 and npm: it fetches the pinned pnpm into .tools/ when the one on PATH is
// missing or another version, installs the workspace from the lockfile, then runs the gates, or the demo.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const rootPackage = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const pnpmVersion = rootPackage.packageManager.replace(/^pnpm@/, "");
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: "1", DO_NOT_TRACK: "1", NO_COLOR: process.env.NO_COLOR ?? "1" };

function run(command, args, options = {}) {
  const result = spawnSync(command, args, {
    cwd: root,
    env,
    stdio: options.capture ? "pipe" : "inherit",
    encoding: "utf8",
  });
  if (result.error) throw result.error;
  return result;
}

function log(line) {
  process.stdout.write(`\n=== ${line}\n`);
}

function ensurePnpm() {
  const onPath = spawnSync("pnpm", ["--version"], { env, encoding: "utf8" });
  if (onPath.status === 0 && onPath.stdout.trim() === pnpmVersion) return;
  const localBin = join(root, ".tools", "node_modules", ".bin");
  const local = spawnSync(join(localBin, "pnpm"), ["--version"], { env, encoding: "utf8" });
  if (local.status !== 0 || local.stdout.trim() !== pnpmVersion) {
    log(`installing pnpm ${pnpmVersion} into .tools/`);
    const npm = run("npm", ["install", "--no-save", "--no-package-lock", "--prefix", ".tools", `pnpm@${pnpmVersion}`]);
    if (npm.status !== 0) fail(`could not install pnpm ${pnpmVersion}`);
  }
  env.PATH = `${localBin}${delimiter}${env.PATH ?? ""}`;
}

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

function hasGitRef(ref) {
  return run("git", ["rev-parse", "--verify", "--quiet", ref], { capture: true }).status === 0;
}

function collectTestCounts() {
  let passed = 0;
  let failed = 0;
  for (const group of ["packages", "tools", "examples"]) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const file = join(dir, name, ".vitest-result.json");
      if (!existsSync(file)) continue;
      const report = JSON.parse(readFileSync(file, "utf8"));
      passed += report.numPassedTests ?? 0;
      failed += (report.numFailedTests ?? 0) + (report.numFailedTestSuites ?? 0);
    }
  }
  return { passed, failed };
}

function clearTestReports() {
  for (const group of ["packages", "tools", "examples"]) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) rmSync(join(dir, name, ".vitest-result.json"), { force: true });
  }
}

function install() {
  ensurePnpm();
  log("pnpm install --frozen-lockfile");
  if (run("pnpm", ["install", "--frozen-lockfile"]).status !== 0) fail("pnpm install failed");
}

function test() {
  install();
  const failedGates = [];
  const gate = (name, command, args) => {
    log(name);
    if (run(command, args).status !== 0) failedGates.push(name);
  };
  const inGit = existsSync(join(root, ".git"));
  gate("lint (biome)", "pnpm", ["exec", "biome", "ci", "."]);
  gate("buf lint", "pnpm", ["exec", "buf", "lint"]);
  gate("buf format", "pnpm", ["exec", "buf", "format", "--diff", "--exit-code"]);
  if (inGit && hasGitRef("main") && run("git", ["cat-file", "-e", "main:proto"], { capture: true }).status === 0) {
    gate("buf breaking (against main)", "pnpm", ["exec", "buf", "breaking", "--against", ".git#branch=main"]);
  } else {
    log("buf breaking: skipped (no main branch with proto/)");
  }
  // main is the branch a change lands on, so a clone of main compares with itself; the committed baseline image is
  // what catches a breaking change there. Refresh it (`pnpm proto:baseline`) only for a deliberate break.
  gate("buf breaking (against the baseline image)", "pnpm", [
    "exec",
    "buf",
    "breaking",
    "--against",
    "tools/proto-compat/baseline.binpb",
  ]);
  gate("generate", "pnpm", ["exec", "turbo", "run", "generate", "--output-logs=errors-only"]);
  if (inGit) {
    log("generated code matches proto/");
    // Each generated tree: packages/protos (from proto/) and the xDS interop tool's test service.
    const generated = ["packages/protos/src/gen", "tools/xds-interop/src/gen"];
    const status = run("git", ["status", "--porcelain", "--", ...generated], { capture: true });
    if (status.stdout.trim() !== "") {
      process.stdout.write(
        `${status.stdout}\nThe generated code differs from the committed one: run \`pnpm generate\` and commit.\n`,
      );
      failedGates.push("generated code is up to date");
    }
  }
  gate("no import cycles (madge)", "node", ["tools/scripts/check-cycles.mjs"]);
  clearTestReports();
  const TURBO_GATE = "typecheck, build and test (turbo)";
  gate(TURBO_GATE, "pnpm", [
    "exec",
    "turbo",
    "run",
    "typecheck",
    "build",
    "test",
    "--continue",
    "--output-logs=new-only",
  ]);
  if (inGit && hasGitRef("main")) {
    gate("changeset status", "pnpm", ["exec", "changeset", "status", "--since=main"]);
  } else {
    log("changeset status: skipped (no main branch)");
  }
  const { passed, failed } = collectTestCounts();
  const testsFailed = failed > 0;
  // Failed tests already count the turbo gate's failure; any other failed gate counts as one.
  const gateFailures = failedGates.filter((name) => !(testsFailed && name === TURBO_GATE)).length;
  if (failedGates.length > 0) process.stdout.write(`\nfailed gates: ${failedGates.join("; ")}\n`);
  process.stdout.write(`\n${passed} passed, ${failed + gateFailures} failed\n`);
  process.exit(failed + gateFailures > 0 ? 1 : 0);
}

function demo() {
  install();
  log("build");
  if (run("pnpm", ["exec", "turbo", "run", "build", "--output-logs=errors-only"]).status !== 0) fail("build failed");
  log("demo");
  const result = run("pnpm", ["--filter", "@xdskit/demo", "run", "start"]);
  process.exit(result.status ?? 1);
}

const command = process.argv[2];
if (command === "test") test();
else if (command === "demo") demo();
else fail("usage: run.mjs test|demo");
