#!/usr/bin/env node
// `prepack` of every public package (pnpm runs it in the package's directory before `pnpm pack` and `pnpm publish`):
// builds the package and the packages it references (`tsc -b`: nothing when they are up to date), removes from dist
// what no source file gives any more (a file deleted from src must not linger in a tarball), and copies the
// repository's LICENSE in, since a tarball holds only files under its own directory. tools/scripts/check-pack.mjs then
// checks what the tarball holds.
//
// dist is never deleted as a whole: the consumer test packs every package while the test suites of packages that
// import them run beside it, and a suite that resolved a package while its dist was gone failed to load.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** What tsc writes for a source file: its JavaScript, its declarations, and their source maps. */
const OUTPUT = /\.(?:js|d\.ts)(?:\.map)?$/;

/**
 * Removes, under `dist`, the outputs of source files `src` no longer has; returns their paths. Other files (none that
 * tsc writes) are left as they are.
 */
export function pruneStaleOutputs(dist, src) {
  const removed = [];
  if (!existsSync(dist)) return removed;
  for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !OUTPUT.test(entry.name)) continue;
    const path = join(entry.parentPath ?? entry.path, entry.name);
    const base = join(src, path.slice(dist.length + 1).replace(OUTPUT, ""));
    if (existsSync(`${base}.ts`) || existsSync(`${base}.tsx`)) continue;
    rmSync(path);
    removed.push(path);
  }
  return removed;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const build = spawnSync("tsc", ["-b"], { stdio: "inherit", shell: process.platform === "win32" });
  if (build.error || build.status !== 0) {
    process.stderr.write(`prepack: tsc -b failed in ${process.cwd()}\n`);
    process.exit(1);
  }
  for (const path of pruneStaleOutputs(join(process.cwd(), "dist"), join(process.cwd(), "src"))) {
    process.stdout.write(`prepack: removed ${path} (no source file gives it)\n`);
  }
  copyFileSync(join(root, "LICENSE"), "LICENSE");
}
