#!/usr/bin/env node
// `pnpm release [--dry-run]`: every gate of `npm test` (which includes the consumer test of the packed tarballs),
// then check-pack.mjs once more on fresh tarballs, then `changeset publish`, which publishes each public package
// whose version is not on the registry yet (run `pnpm changeset version` and commit before). With `--dry-run`,
// `pnpm publish --dry-run` instead, per package: it lists each tarball's contents and publishes nothing.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packAndCheck, publicPackages, repoRoot } from "./check-pack.mjs";

const dryRun = process.argv.includes("--dry-run");

function step(title, command, args, cwd = repoRoot) {
  process.stdout.write(`\n=== ${title}\n`);
  const result = spawnSync(command, args, { cwd, stdio: "inherit" });
  if (result.error || result.status !== 0) {
    process.stderr.write(`release: ${title} failed; nothing was published\n`);
    process.exit(1);
  }
}

step("every gate (npm test)", "node", ["tools/scripts/run.mjs", "test"]);

process.stdout.write("\n=== pack and check every public package\n");
const tarballs = mkdtempSync(join(tmpdir(), "xdskit-release-"));
const results = packAndCheck(tarballs);
rmSync(tarballs, { recursive: true, force: true });
for (const { name, files, problems } of results) {
  process.stdout.write(`${problems.length === 0 ? "ok  " : "FAIL"}  ${name}: ${files.length} files\n`);
  for (const problem of problems) process.stdout.write(`        ${problem}\n`);
}
if (results.some((r) => r.problems.length > 0)) {
  process.stderr.write("release: a tarball is broken; nothing was published\n");
  process.exit(1);
}

if (dryRun) {
  for (const pkg of publicPackages()) {
    step(`pnpm publish --dry-run ${pkg.manifest.name}`, "pnpm", ["publish", "--dry-run", "--no-git-checks"], pkg.dir);
  }
} else {
  step("changeset publish", "pnpm", ["exec", "changeset", "publish"]);
}
