// Reaches classes a peer module defines but does not export (grpc-js-xds's ring picker, grpc-js's WRR picker), so
// their hot paths can be measured beside ours: the module's own file is compiled once more with extra exports.
// Nothing of the peer is copied; its installed build is loaded from node_modules at run time.
import { readFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { dirname } from "node:path";

const require = createRequire(import.meta.url);

type ModuleInternals = typeof Module & { _nodeModulePaths(from: string): string[] };
type CompilableModule = Module & { _compile(source: string, filename: string): void; paths: string[] };

/** `names` of the top-level bindings of `specifier` (resolved from `from`, a package this tool depends on). */
export function peerInternals(from: string, specifier: string, names: readonly string[]): Record<string, unknown> {
  // The package itself first: its entry point sets up what its modules expect when loaded (e.g. proto paths).
  require(from);
  const base = dirname(require.resolve(`${from}/package.json`));
  const file = createRequire(`${base}/`).resolve(specifier);
  const source = `${readFileSync(file, "utf8")}\n${names.map((n) => `exports.__peer_${n} = ${n};`).join("\n")}\n`;
  const m = new Module(file) as CompilableModule;
  m.filename = file;
  m.paths = (Module as ModuleInternals)._nodeModulePaths(dirname(file));
  m._compile(source, file);
  const exported = m.exports as Record<string, unknown>;
  return Object.fromEntries(names.map((n) => [n, exported[`__peer_${n}`]]));
}

export { require as peerRequire };
