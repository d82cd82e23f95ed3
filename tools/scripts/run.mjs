#!/usr/bin/env node
// The commands of the READMEs: `npm test`, `npm run demo`, `npm run pack` and an example's `npm run setup`.
// Works on a machine with only Node 20 and npm: it fetches the pinned pnpm into .tools/ when the one on PATH is
// missing or another version, installs the workspace from the lockfile, then runs the gates, the demo, packs the
// public packages or builds what one package needs. The demo and setup skip the install and the build when
// nothing they depend on changed since the last time (up-to-date.mjs), so a second run takes a second or two.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { ensureEtcd } from "./etcd-setup.mjs";
import { clearTestReports, collectTestCounts, summaryLine } from "./test-report.mjs";
import { buildInputsKey, installIsCurrent, readStamp, workspaceClosure, writeStamp } from "./up-to-date.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const rootPackage = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const pnpmVersion = rootPackage.packageManager.replace(/^pnpm@/, "");
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: "1", DO_NOT_TRACK: "1", NO_COLOR: process.env.NO_COLOR ?? "1" };
// NO_COLOR (https://no-color.org) is not read by biome and turbo (its task prefixes): tell them.
const noColor = Boolean(env.NO_COLOR);
const turboColor = noColor ? ["--no-color"] : [];

function run(command, args, options = {}) {
  const result = spawnSync(command, args, {
    cwd: root,
    env: options.env ?? env,
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

function install() {
  ensurePnpm();
  log("pnpm install --frozen-lockfile");
  if (run("pnpm", ["install", "--frozen-lockfile"]).status !== 0) fail("pnpm install failed");
}

function test() {
  install();
  const etcd = ensureEtcd({ log, run });
  // Part of the test tasks' hash (turbo.json): a result cached while etcd was missing (its tests skipped) is not
  // replayed once it is installed.
  env.XDSKIT_ETCD_AVAILABLE = etcd.available ? "1" : "0";
  const failedGates = [];
  const gate = (name, command, args) => {
    log(name);
    if (run(command, args).status !== 0) failedGates.push(name);
  };
  const inGit = existsSync(join(root, ".git"));
  gate("lint (biome)", "pnpm", ["exec", "biome", "ci", ...(noColor ? ["--colors=off"] : []), "."]);
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
  gate("generate", "pnpm", ["exec", "turbo", "run", "generate", "--output-logs=errors-only", ...turboColor]);
  if (inGit) {
    log("generated code matches proto/");
    // Each generated tree: packages/protos (from proto/), xds-client's wire views (from its views.json), the xDS
    // interop tool's test service, etcd-source's subset of etcd's v3 API and the connect-greeter example's service.
    const generated = [
      "packages/protos/src/gen",
      "packages/xds-client/src/gen",
      "tools/xds-interop/src/gen",
      "packages/etcd-source/src/gen",
      "examples/connect-greeter/src/gen",
    ];
    const status = run("git", ["status", "--porcelain", "--", ...generated], { capture: true });
    if (status.stdout.trim() !== "") {
      process.stdout.write(
        `${status.stdout}\nThe generated code differs from the committed one: run \`pnpm generate\` and commit.\n`,
      );
      failedGates.push("generated code is up to date");
    }
  }
  gate("no import cycles (madge)", "node", ["tools/scripts/check-cycles.mjs"]);
  clearTestReports(root);
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
    ...turboColor,
  ]);
  if (inGit && hasGitRef("main")) {
    gate("changeset status", "pnpm", ["exec", "changeset", "status", "--since=main"]);
  } else {
    log("changeset status: skipped (no main branch)");
  }
  const counts = collectTestCounts(root);
  const { failed } = counts;
  const testsFailed = failed > 0;
  // Failed tests already count the turbo gate's failure; any other failed gate counts as one.
  const gateFailures = failedGates.filter((name) => !(testsFailed && name === TURBO_GATE)).length;
  if (failedGates.length > 0) process.stdout.write(`\nfailed gates: ${failedGates.join("; ")}\n`);
  const line = summaryLine({ ...counts, failed: failed + gateFailures }, { etcdMissing: !etcd.available });
  process.stdout.write(`\n${line}\n`);
  process.exit(failed + gateFailures > 0 ? 1 : 0);
}

/**
 * Builds `filter` (a package name) and the packages it depends on and says what it is doing: one line per task
 * turbo runs, then the total. Turbo's own output is shown only when the build fails.
 */
async function build(name, what) {
  log(`build: ${what} (about 2 minutes on 2 cores the first time; cached afterwards)`);
  const started = Date.now();
  const args = ["exec", "turbo", "run", "build", `--filter=${name}...`, "--output-logs=new-only", ...turboColor];
  const child = spawn("pnpm", args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  let built = 0;
  let cached = 0;
  const lines = createInterface({ input: child.stdout });
  lines.on("line", (line) => {
    output += `${line}\n`;
    const task = /^(\S+):(\w+): cache (miss|hit|bypass)/.exec(line);
    if (task?.[3] === "hit") cached++;
    else if (task) {
      built++;
      process.stdout.write(`  ${task[2]} ${task[1]}\n`);
    }
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  const [code] = await Promise.all([
    new Promise((resolve) => child.on("close", resolve)),
    new Promise((resolve) => lines.on("close", resolve)),
  ]);
  if (code !== 0) {
    process.stdout.write(output);
    fail("build failed");
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(`  ${built} task(s) run, ${cached} already up to date, in ${seconds} s\n`);
}

/**
 * Installs and builds what package `name` needs, unless nothing it depends on changed since the last time this
 * did (the lockfile as installed, and every file of the workspace packages it depends on). Returns whether it did.
 */
async function prepare(name, what) {
  const packages = workspaceClosure(root, name);
  const stampName = name.replace(/[@/]/g, "_");
  if (installIsCurrent(root) && readStamp(root, stampName) === buildInputsKey(root, packages)) return false;
  install();
  await build(name, what);
  writeStamp(root, stampName, buildInputsKey(root, packages));
  return true;
}

async function demo() {
  const prepared = await prepare("@xdskit/demo", "the demo and the packages it uses");
  if (prepared) log("demo (about two seconds)");
  const result = run("node", [join("tools", "demo", "dist", "main.js")]);
  process.exit(result.status ?? 1);
}

/** `setup <package>`: what an example's README starts with, from a fresh clone. */
async function setup(name) {
  if (!name) fail("usage: run.mjs setup <package name>");
  const prepared = await prepare(name, `${name} and the packages it uses`);
  process.stdout.write(prepared ? `\n${name} is built.\n` : `${name} is already built; nothing changed since.\n`);
}

/** `pack [--out dir]`: every public package's tarball in one folder (default dist-packages/), ready to install. */
function pack() {
  install();
  log("pack: every public package, built from clean (a few minutes on 2 cores)");
  const result = run("node", [join("tools", "scripts", "pack.mjs"), ...process.argv.slice(3)]);
  process.exit(result.status ?? 1);
}

const command = process.argv[2];
if (command === "test") test();
else if (command === "demo") await demo();
else if (command === "setup") await setup(process.argv[3]);
else if (command === "pack") pack();
else fail("usage: run.mjs test|demo|pack|setup <package>");
