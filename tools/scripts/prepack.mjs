#!/usr/bin/env node
// `prepack` of every public package (pnpm runs it in the package's directory before `pnpm pack` and `pnpm publish`):
// builds the package from clean (a file deleted from src must not linger in dist) and the packages it references,
// and copies the repository's LICENSE in, since a tarball holds
// only files under its own directory. tools/scripts/check-pack.mjs then checks what the tarball holds.
import { spawnSync } from "node:child_process";
import { copyFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
rmSync("dist", { recursive: true, force: true });
rmSync("tsconfig.tsbuildinfo", { force: true });
const build = spawnSync("tsc", ["-b"], { stdio: "inherit", shell: process.platform === "win32" });
if (build.error || build.status !== 0) {
  process.stderr.write(`prepack: tsc -b failed in ${process.cwd()}\n`);
  process.exit(1);
}
copyFileSync(join(root, "LICENSE"), "LICENSE");
