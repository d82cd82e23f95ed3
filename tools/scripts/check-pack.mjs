#!/usr/bin/env node
// Packs every public package (each `packages/*` without `"private": true`) with `pnpm pack`, which runs its
// `prepack` (build, LICENSE), and fails on a tarball that could not work once published: missing build output,
// types, LICENSE, README or CHANGELOG, an `exports` or `bin` target absent from the tarball, or a `workspace:` /
// `catalog:` specifier left in its package.json. `node tools/scripts/check-pack.mjs [--out DIR]` keeps the
// tarballs in DIR; tools/consumer imports the same functions.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, posix, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Every `packages/*` whose package.json is not private, sorted by directory name. */
export function publicPackages(root = repoRoot) {
  const dir = join(root, "packages");
  return readdirSync(dir)
    .sort()
    .map((name) => join(dir, name))
    .filter((path) => existsSync(join(path, "package.json")))
    .map((path) => ({ dir: path, manifest: JSON.parse(readFileSync(join(path, "package.json"), "utf8")) }))
    .filter((pkg) => pkg.manifest.private !== true);
}

function run(command, args, options) {
  const result = spawnSync(command, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

/** Packs one package into `destination`; returns the tarball's path. */
export function packPackage(pkg, destination) {
  const before = new Set(existsSync(destination) ? readdirSync(destination) : []);
  run("pnpm", ["pack", "--pack-destination", destination], { cwd: pkg.dir });
  const created = readdirSync(destination).filter((f) => f.endsWith(".tgz") && !before.has(f));
  if (created.length !== 1) throw new Error(`pnpm pack in ${pkg.dir} produced ${created.length} tarballs`);
  return join(destination, created[0]);
}

/** Unpacks a tarball into a new temporary directory; returns the package root and its file paths (posix, relative). */
export function unpackTarball(tarball) {
  const dir = mkdtempSync(join(tmpdir(), "xdskit-unpacked-"));
  run("tar", ["-xzf", tarball, "-C", dir]);
  const root = join(dir, "package");
  const files = readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join("/"))
    .sort();
  return { root, files };
}

/** Every file path an `exports` value names (conditions flattened), as written, e.g. `./dist/gen/*.d.ts`. */
function exportTargets(value) {
  if (typeof value === "string") return [value];
  if (value === null || typeof value !== "object") return [];
  return Object.values(value).flatMap(exportTargets);
}

function matches(pattern, files) {
  const path = posix.normalize(pattern);
  if (!path.includes("*")) return files.includes(path);
  const [prefix, suffix] = path.split("*");
  return files.some((f) => f.startsWith(prefix) && f.endsWith(suffix) && f.length > prefix.length + suffix.length);
}

/** A tarball's files and manifest, and what is wrong with it (`problems` is empty when nothing is). */
export function checkTarball(tarball) {
  const { root, files } = unpackTarball(tarball);
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const problems = [];
  for (const required of ["package.json", "README.md", "LICENSE", "CHANGELOG.md", "dist/index.js", "dist/index.d.ts"]) {
    if (!files.includes(required)) problems.push(`${required} is missing`);
  }
  if (!manifest.exports) problems.push("package.json has no exports");
  for (const target of exportTargets(manifest.exports)) {
    if (!matches(target, files)) problems.push(`exports target ${target} is not in the tarball`);
  }
  const bins = typeof manifest.bin === "string" ? [manifest.bin] : Object.values(manifest.bin ?? {});
  for (const target of bins) {
    if (!matches(target, files)) problems.push(`bin target ${target} is not in the tarball`);
  }
  for (const section of ["dependencies", "peerDependencies", "optionalDependencies"]) {
    for (const [name, spec] of Object.entries(manifest[section] ?? {})) {
      if (/^(workspace|catalog):/.test(spec)) problems.push(`${section}.${name} is still "${spec}"`);
    }
  }
  for (const map of files.filter((f) => f.endsWith(".map"))) {
    const { sources = [] } = JSON.parse(readFileSync(join(root, map), "utf8"));
    for (const source of sources) {
      const path = posix.normalize(posix.join(posix.dirname(map), source));
      if (!files.includes(path)) problems.push(`${map} points at ${path}, which is not in the tarball`);
    }
  }
  rmSync(dirname(root), { recursive: true, force: true });
  return { files, manifest, problems };
}

/** Packs and checks every public package; returns `{ name, tarball, problems }` per package. */
export function packAndCheck(destination) {
  mkdirSync(destination, { recursive: true });
  return publicPackages().map((pkg) => {
    const tarball = packPackage(pkg, destination);
    return { name: pkg.manifest.name, dir: pkg.dir, tarball, ...checkTarball(tarball) };
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outIndex = process.argv.indexOf("--out");
  const destination = outIndex > 0 ? resolve(process.argv[outIndex + 1]) : mkdtempSync(join(tmpdir(), "xdskit-pack-"));
  let failed = 0;
  for (const { name, tarball, files, problems } of packAndCheck(destination)) {
    if (problems.length === 0) process.stdout.write(`ok    ${name}: ${files.length} files in ${tarball}\n`);
    else {
      failed++;
      process.stdout.write(`FAIL  ${name} (${tarball}):\n${problems.map((p) => `        ${p}\n`).join("")}`);
    }
  }
  process.exit(failed > 0 ? 1 : 0);
}
