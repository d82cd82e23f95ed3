#!/usr/bin/env node
// The layer gate: within a package's src/, a file may import (relatively, type-only imports included) only files of
// its own layer or of layers below it. Each package's layers are declared in layers.json beside this script, top
// first; a package still flat is declared "flat" and may not grow folders until its layers are declared
// (docs/architecture.md#layers). Imports are read with TypeScript's pre-processor (no type checking), so the gate
// takes well under a second.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const SOURCE_EXTENSIONS = new Set([".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs"]);

/**
 * How a src/ is laid out. `layers`: its units (top folders; root files by name, "." for the root files not named),
 * top layer first. No `layers`: flat (no folders but the generated ones). `pending`: why it is not checked yet.
 * `generated`: top folders of generated code, not checked, importable from anywhere.
 * @typedef {"flat" | { layers?: string[][], generated?: string[], pending?: string }} SourceDeclaration
 */
/** @typedef {{ file: string, line: number, specifier: string, message: string }} Violation */

/** Every source file under `dir`, relative to it, with `/` separators; `skip`: top-level entries left out. */
function sourceFiles(dir, skip = new Set()) {
  /** @type {string[]} */
  const files = [];
  const walk = (sub) => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const path = sub ? `${sub}/${entry.name}` : entry.name;
      if (!sub && skip.has(entry.name)) continue;
      if (entry.isDirectory()) walk(path);
      else if (SOURCE_EXTENSIONS.has(extname(entry.name)) && !entry.name.endsWith(".d.ts")) files.push(path);
    }
  };
  walk("");
  return files.sort();
}

/** The relative imports of a source text: specifier and 1-based line. */
export function relativeImports(text) {
  const info = ts.preProcessFile(text, true, true);
  const starts = lineStarts(text);
  return info.importedFiles
    .filter((ref) => ref.fileName.startsWith("./") || ref.fileName.startsWith("../"))
    .map((ref) => ({ specifier: ref.fileName, line: lineOf(starts, ref.pos) }));
}

function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

function lineOf(starts, pos) {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/**
 * The unit a path (relative to src/) belongs to: its top folder (`streams/`), or for a file at the root its name
 * with a source extension (`index.ts`, whether imported as `./index.js` or found as `index.ts`).
 */
function unitOf(path) {
  const slash = path.indexOf("/");
  if (slash !== -1) return `${path.slice(0, slash)}/`;
  const extension = extname(path);
  return SOURCE_EXTENSIONS.has(extension) ? `${path.slice(0, -extension.length)}.ts` : path;
}

/** A declared unit as unitOf names it: folders end in `/`, root files are `name.ts`. */
function declaredUnit(entry) {
  if (entry.endsWith("/")) return entry;
  const extension = extname(entry);
  return SOURCE_EXTENSIONS.has(extension) ? `${entry.slice(0, -extension.length)}.ts` : `${entry}/`;
}

/**
 * Checks one src/ directory against its declaration. Returns the violations (empty: it passes) and, for a layered
 * source, the imports between units (`from -> to`, each once), for the architecture diagram.
 * @param {string} srcDir
 * @param {SourceDeclaration} declaration
 */
export function checkSource(srcDir, declaration) {
  /** @type {Violation[]} */
  const violations = [];
  /** @type {Set<string>} */
  const edges = new Set();
  const decl = declaration === "flat" ? {} : declaration;
  const generated = new Set(decl.generated ?? []);
  if (decl.pending !== undefined) return { violations, edges };
  if (decl.layers === undefined) {
    for (const entry of readdirSync(srcDir, { withFileTypes: true })) {
      if (entry.isDirectory() && !generated.has(entry.name)) {
        violations.push({
          file: `${entry.name}/`,
          line: 0,
          specifier: "",
          message: `declared flat, but has the folder ${entry.name}/: declare its layers in layers.json`,
        });
      }
    }
    return { violations, edges };
  }
  const generatedUnits = new Set([...generated].map((name) => `${name}/`));
  /** @type {Map<string, number>} */
  const rank = new Map();
  let rest;
  decl.layers.forEach((layer, index) => {
    for (const unit of layer) {
      if (unit === ".") rest = index;
      else if (rank.has(declaredUnit(unit))) throw new Error(`${unit} is in two layers`);
      else rank.set(declaredUnit(unit), index);
    }
  });
  const rankOf = (unit) => rank.get(unit) ?? (unit.endsWith("/") ? undefined : rest);
  for (const file of sourceFiles(srcDir, generated)) {
    const unit = unitOf(file);
    const from = rankOf(unit);
    if (from === undefined) {
      violations.push({ file, line: 0, specifier: "", message: `${unit} is in no layer: add it to layers.json` });
      continue;
    }
    for (const { specifier, line } of relativeImports(readFileSync(join(srcDir, file), "utf8"))) {
      const target = relative(srcDir, resolve(srcDir, dirname(file), specifier))
        .split(sep)
        .join("/");
      if (target.startsWith("../") || target === "..") continue; // outside src/: not a layer
      const targetUnit = unitOf(target);
      if (generatedUnits.has(targetUnit) || targetUnit === unit) continue;
      edges.add(`${unit} -> ${targetUnit}`);
      const to = rankOf(targetUnit);
      if (to === undefined || to >= from) continue;
      violations.push({
        file,
        line,
        specifier,
        message: `${unit} (layer ${from + 1}) imports ${targetUnit} (layer ${to + 1}), a layer above it`,
      });
    }
  }
  return { violations, edges };
}

/**
 * Checks every declared source of the repository at `root`, and that every src/ of packages/, tools/ and
 * examples/ is declared. Returns the failures as lines.
 */
export function checkRepository(root, declarations) {
  /** @type {string[]} */
  const failures = [];
  const declared = new Set(Object.keys(declarations).filter((key) => !key.startsWith("$")));
  for (const group of ["packages", "tools", "examples"]) {
    if (!existsSync(join(root, group))) continue;
    for (const name of readdirSync(join(root, group))) {
      const src = `${group}/${name}/src`;
      if (existsSync(join(root, src)) && statSync(join(root, src)).isDirectory() && !declared.has(src)) {
        failures.push(`${src}: not declared in layers.json (declare its layers, or "flat")`);
      }
    }
  }
  for (const src of declared) {
    if (!existsSync(join(root, src))) {
      failures.push(`${src}: declared in layers.json, but there is no such directory`);
      continue;
    }
    for (const v of checkSource(join(root, src), declarations[src]).violations) {
      failures.push(
        `${src}/${v.file}${v.line ? `:${v.line}` : ""}: ${v.message}${v.specifier ? ` ("${v.specifier}")` : ""}`,
      );
    }
  }
  return failures;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const here = dirname(fileURLToPath(import.meta.url));
  const root = join(here, "..", "..");
  const declarations = JSON.parse(readFileSync(join(here, "layers.json"), "utf8"));
  const graph = process.argv.indexOf("--graph");
  if (graph !== -1) {
    const src = process.argv[graph + 1];
    for (const edge of [...checkSource(join(root, src), declarations[src]).edges].sort()) console.log(edge);
  } else {
    const failures = checkRepository(root, declarations);
    for (const failure of failures) console.error(failure);
    if (failures.length > 0) {
      console.error(`${failures.length} import(s) against the layers of layers.json (docs/architecture.md#layers)`);
      process.exit(1);
    }
    console.log(`layers: ${Object.keys(declarations).filter((k) => !k.startsWith("$")).length} sources checked`);
  }
}
