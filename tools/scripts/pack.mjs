#!/usr/bin/env node
// `npm run pack`: every public package's tarball in one folder (default `dist-packages/`), to install before the
// packages are on a registry. Packs and checks them as tools/scripts/check-pack.mjs does, then rewrites each one's
// dependencies on our other packages (`^0.1.0` in a tarball for the registry) to `file:` the sibling tarball in
// that folder, by absolute path (docs/decisions.md#local-tarballs), so `npm install <folder>/xdskit-connect-xds.tgz`
// alone brings the xdskit packages it needs. Names carry no version (`xdskit-<package>.tgz`), so install lines stay
// the same from one release to the next. These tarballs are for this machine only: never publish them (`pnpm
// release` packs its own).
//   node tools/scripts/pack.mjs [--out DIR]
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { packAndCheck, repoRoot, unpackTarball } from "./check-pack.mjs";

/** `@xdskit/connect-xds` is `xdskit-connect-xds.tgz`. */
export function localTarballName(packageName) {
  return `${packageName.replace(/^@/, "").replace("/", "-")}.tgz`;
}

const SECTIONS = ["dependencies", "optionalDependencies", "peerDependencies"];

/** `manifest` with each dependency on a package of `names` pointing at its tarball in `folder` (absolute). */
export function localizeManifest(manifest, names, folder) {
  const copy = { ...manifest };
  for (const section of SECTIONS) {
    if (!manifest[section]) continue;
    copy[section] = Object.fromEntries(
      Object.entries(manifest[section]).map(([name, spec]) => [
        name,
        names.has(name) ? `file:${join(folder, localTarballName(name))}` : spec,
      ]),
    );
  }
  return copy;
}

/**
 * Writes, for each packed tarball (`{ name, tarball }`), `folder/xdskit-<package>.tgz` with its dependencies on the
 * others rewritten to `file:` paths in `folder`; returns the paths written, by package name.
 */
export function localizeTarballs(packed, folder) {
  const out = resolve(folder);
  mkdirSync(out, { recursive: true });
  const names = new Set(packed.map((p) => p.name));
  const written = {};
  for (const { name, tarball } of packed) {
    const { root } = unpackTarball(tarball);
    const manifestPath = join(root, "package.json");
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
    writeFileSync(manifestPath, `${JSON.stringify(localizeManifest(manifest, names, out), null, 2)}\n`);
    const target = join(out, localTarballName(name));
    const tar = spawnSync("tar", ["-czf", target, "-C", dirname(root), "package"], { encoding: "utf8" });
    rmSync(dirname(root), { recursive: true, force: true });
    if (tar.status !== 0) throw new Error(`tar failed for ${name}: ${tar.stderr}`);
    written[name] = target;
  }
  return written;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outIndex = process.argv.indexOf("--out");
  const folder = resolve(outIndex > 0 ? process.argv[outIndex + 1] : join(repoRoot, "dist-packages"));
  const staging = mkdtempSync(join(tmpdir(), "xdskit-pack-"));
  const packed = packAndCheck(staging);
  const broken = packed.filter((p) => p.problems.length > 0);
  for (const { name, problems } of broken)
    process.stderr.write(`${name}:\n${problems.map((p) => `  ${p}\n`).join("")}`);
  if (broken.length > 0) process.exit(1);
  rmSync(folder, { recursive: true, force: true });
  const written = localizeTarballs(packed, folder);
  rmSync(staging, { recursive: true, force: true });
  for (const [name, path] of Object.entries(written)) process.stdout.write(`${name.padEnd(28)} ${path}\n`);
  process.stdout.write(
    `\nInstall the ones you use; the xdskit packages they depend on come along from ${folder}:\n` +
      `  npm install ${join(folder, localTarballName("@xdskit/xds-client"))}\n`,
  );
}
