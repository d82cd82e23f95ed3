// Whether `npm run demo` / an example's `npm run setup` may skip `pnpm install` and the build: the install is
// current when the lockfile pnpm last installed from (node_modules/.pnpm/lock.yaml) is the checked-out one; the
// build is current when no file of the workspace packages the target depends on changed (path, size and mtime)
// since the last build that succeeded, and each of them still has its build output. Reading this takes tens of
// milliseconds, against seconds for `pnpm install` and turbo to find out the same.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

/** Folders and files that a build writes or that do not feed it. */
const SKIPPED = new Set(["node_modules", "dist", ".turbo", "coverage", ".vitest-result.json", "LICENSE"]);

/** True when node_modules was installed from the lockfile as it is now. */
export function installIsCurrent(root) {
  const installed = join(root, "node_modules", ".pnpm", "lock.yaml");
  if (!existsSync(installed)) return false;
  return readFileSync(installed).equals(readFileSync(join(root, "pnpm-lock.yaml")));
}

/** Every workspace package directory (packages/*, tools/*, examples/*) by package name. */
export function workspacePackages(root) {
  const found = new Map();
  for (const group of ["packages", "tools", "examples"]) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const manifestPath = join(dir, name, "package.json");
      if (!existsSync(manifestPath)) continue;
      const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
      found.set(manifest.name, { dir: join(dir, name), manifest });
    }
  }
  return found;
}

/** The directories of `name` and of every workspace package it depends on (`workspace:` specifiers), transitively. */
export function workspaceClosure(root, name) {
  const all = workspacePackages(root);
  if (!all.has(name)) throw new Error(`no workspace package named ${name}`);
  const seen = new Set();
  const queue = [name];
  while (queue.length > 0) {
    const next = queue.shift();
    if (seen.has(next)) continue;
    seen.add(next);
    const { manifest } = all.get(next);
    for (const [dep, spec] of Object.entries({ ...manifest.dependencies, ...manifest.devDependencies })) {
      if (String(spec).startsWith("workspace:") && all.has(dep)) queue.push(dep);
    }
  }
  return [...seen].sort().map((pkg) => all.get(pkg).dir);
}

function listFiles(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name) || entry.name.endsWith(".tsbuildinfo")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) listFiles(path, out);
    else if (entry.isFile()) out.push(path);
  }
}

/**
 * A key of what the build of `dirs` reads: each file's path, size and mtime, and the root's shared configuration;
 * `missing output` when a package with a build script has no dist/ (deleted since, or never built).
 */
export function buildInputsKey(root, dirs) {
  const hash = createHash("sha256");
  const files = ["package.json", "pnpm-lock.yaml", "tsconfig.base.json", "turbo.json"].map((f) => join(root, f));
  for (const dir of dirs) {
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    if (manifest.scripts?.build && !existsSync(join(dir, "dist"))) return "missing output";
    listFiles(dir, files);
  }
  for (const file of files) {
    const { size, mtimeMs } = statSync(file);
    hash.update(`${relative(root, file)}\0${size}\0${mtimeMs}\n`);
  }
  return hash.digest("hex");
}

const stampFile = (root, name) => join(root, "node_modules", ".cache", "xdskit-run", `${name}.stamp`);

/** The key written by the last build of `name` that succeeded, or undefined. */
export function readStamp(root, name) {
  const file = stampFile(root, name);
  return existsSync(file) ? readFileSync(file, "utf8") : undefined;
}

export function writeStamp(root, name, key) {
  mkdirSync(join(root, "node_modules", ".cache", "xdskit-run"), { recursive: true });
  writeFileSync(stampFile(root, name), key);
}
