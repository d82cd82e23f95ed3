// The consumer project: a directory outside the workspace where the packed tarballs are installed with npm, as an
// application would install them from the registry, and where consumer code is compiled with the workspace's
// TypeScript and run.
import { spawnSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { type ReadmeBlock, readmeBlocks } from "./readme-blocks.js";

export interface PackedPackage {
  readonly name: string;
  /** The package's directory in the workspace. */
  readonly dir: string;
  readonly tarball: string;
  /** Paths inside the tarball (posix, without `package/`). */
  readonly files: readonly string[];
  readonly manifest: {
    readonly engines?: { readonly node?: string };
    readonly exports?: unknown;
    readonly bin?: string | Record<string, string>;
    readonly peerDependencies?: Readonly<Record<string, string>>;
    readonly peerDependenciesMeta?: Readonly<Record<string, { readonly optional?: boolean }>>;
  };
}

/**
 * What README examples may import besides our packages, with the ranges an application would write. npm installs
 * the peers our packages declare by itself; these are listed because consumer code imports them directly.
 */
export const THIRD_PARTY_DEPENDENCIES: Readonly<Record<string, string>> = {
  "@bufbuild/protobuf": "^2.7.0",
  "@connectrpc/connect": "^2.1.2",
  "@connectrpc/connect-node": "^2.1.2",
  "@grpc/grpc-js": "^1.10.0",
  "@opentelemetry/api": "^1.9.0",
  "@opentelemetry/sdk-metrics": "^2.0.0",
  "@types/node": "^20.19.0",
};

/**
 * Added after the tarballs, as the root README's `# Node 20` command says (see test/consumer.test.ts), with
 * `@grpc/grpc-js` beside them: the order in which an application on Node 20 used to send npm into an ERESOLVE loop.
 */
export const ADDED_AFTER_TARBALLS: readonly string[] = [
  "@grpc/grpc-js",
  "@connectrpc/connect",
  "@connectrpc/connect-node",
];

const COMPILER_OPTIONS = {
  target: "es2022",
  module: "nodenext",
  moduleResolution: "nodenext",
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  verbatimModuleSyntax: true,
  skipLibCheck: false,
};

export interface CommandResult {
  readonly status: number | null;
  readonly output: string;
}

/** Runs a command to completion; never throws for a failing command (the caller reports `output`). */
export function run(command: string, args: readonly string[], cwd: string, timeoutMs: number): CommandResult {
  const env: Record<string, string | undefined> = {};
  // npm must see the user's npm setup, not the `npm_*` variables the workspace's pnpm run exports.
  for (const [key, value] of Object.entries(process.env)) {
    if (
      !key.startsWith("npm_") ||
      /^npm_config_(registry|cache|userconfig|(https_)?proxy|noproxy|cafile|strict_ssl)$/i.test(key)
    ) {
      env[key] = value;
    }
  }
  const result = spawnSync(command, args, { cwd, env, encoding: "utf8", timeout: timeoutMs, maxBuffer: 64 << 20 });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}${result.error ? `\n${result.error.message}` : ""}`;
  return { status: result.status, output: `$ ${command} ${args.join(" ")} (in ${cwd})\n${output}` };
}

/** `<name><subpath>` for every entry point in `exports`; a wildcard subpath is tried with one file it matches. */
export function entryPoints(pkg: PackedPackage): string[] {
  const exports = pkg.manifest.exports;
  if (typeof exports !== "object" || exports === null) return [pkg.name];
  const specifiers: string[] = [];
  for (const [subpath, target] of Object.entries(exports)) {
    if (!subpath.startsWith(".")) return [pkg.name];
    if (subpath === "./package.json") continue; // for tools that read the manifest, not code
    if (!subpath.includes("*")) {
      specifiers.push(subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`);
      continue;
    }
    const types = typeof target === "string" ? target : (target as Record<string, string>).types;
    const [prefix = "", suffix = ""] = (types ?? "").replace(/^\.\//, "").split("*");
    const sample = pkg.files.find((f) => f.startsWith(prefix) && f.endsWith(suffix));
    if (sample)
      specifiers.push(
        `${pkg.name}/${subpath.slice(2).replace("*", sample.slice(prefix.length, -suffix.length || undefined))}`,
      );
  }
  return specifiers;
}

/**
 * Whether an entry point exists for an optional peer (its declarations import one, e.g. `@xdskit/orca-lrs-bridge/grpc-js`
 * and `@grpc/grpc-js`): such an entry point is as Node-bound as the peer, so it is type-checked with Node's types only.
 */
export function needsOptionalPeer(pkg: PackedPackage, specifier: string): boolean {
  const optional = Object.entries(pkg.manifest.peerDependenciesMeta ?? {})
    .filter(([, meta]) => meta.optional === true)
    .map(([name]) => name);
  if (optional.length === 0) return false;
  const exports = pkg.manifest.exports;
  if (typeof exports !== "object" || exports === null) return false;
  const subpath = specifier === pkg.name ? "." : `./${specifier.slice(pkg.name.length + 1)}`;
  const target = (exports as Record<string, unknown>)[subpath];
  const types = typeof target === "string" ? target : (target as Record<string, string> | undefined)?.types;
  if (types === undefined) return false;
  const declarations = readFileSync(join(pkg.dir, types), "utf8");
  return optional.some((peer) => declarations.includes(`from "${peer}"`) || declarations.includes(`from '${peer}'`));
}

/** The README examples of every package, each written as its own module under `src/readme/`. */
export function writeReadmeExamples(project: string, packages: readonly PackedPackage[]): ReadmeBlock[] {
  mkdirSync(join(project, "src", "readme"), { recursive: true });
  const blocks: ReadmeBlock[] = [];
  for (const pkg of packages) {
    const readme = readFileSync(join(pkg.dir, "README.md"), "utf8");
    for (const block of readmeBlocks(readme, pkg.dir.split(/[\\/]/).at(-1) ?? pkg.name)) {
      // `export {}` keeps each example a module, so examples do not share a global scope.
      writeFileSync(join(project, "src", "readme", `${block.id}.ts`), `${block.code}\n\nexport {};\n`);
      blocks.push(block);
    }
  }
  return blocks;
}

/**
 * Copies the sources of every `examples/<name>/src` into `src/examples/<name>/`, as a user copies an example into a
 * project: compiled with the rest, run from `dist/examples/<name>/main.js`. Returns the example names.
 */
export function copyExamples(project: string, examples: string): string[] {
  if (!existsSync(examples)) return [];
  const names = readdirSync(examples).filter((name) => existsSync(join(examples, name, "src", "main.ts")));
  for (const name of names) {
    cpSync(join(examples, name, "src"), join(project, "src", "examples", name), { recursive: true });
  }
  return names;
}

/** Writes package.json, both tsconfigs and the consumer sources; npm install is the caller's next step. */
export function createProject(project: string, packages: readonly PackedPackage[], fixtures: string): void {
  mkdirSync(join(project, "src"), { recursive: true });
  const tarballs = Object.fromEntries(packages.map((p) => [p.name, `file:${p.tarball}`]));
  writeFileSync(
    join(project, "package.json"),
    `${JSON.stringify(
      {
        name: "xdskit-consumer",
        private: true,
        type: "module",
        dependencies: {
          ...Object.fromEntries(
            Object.entries(THIRD_PARTY_DEPENDENCIES).filter(([name]) => !ADDED_AFTER_TARBALLS.includes(name)),
          ),
          ...tarballs,
        },
        // Our packages depend on each other by range (^x.y.z): the tarballs stand in for the registry.
        overrides: tarballs,
      },
      null,
      2,
    )}\n`,
  );
  const entries = packages.flatMap((pkg) => entryPoints(pkg).map((specifier) => ({ pkg, specifier })));
  const entryModule = (list: readonly { specifier: string }[]) =>
    `${list.map(({ specifier }, i) => `import type * as entry${i} from "${specifier}";`).join("\n")}\n` +
    `export type EntryPoints = [${list.map((_, i) => `typeof entry${i}`).join(", ")}];\n`;
  writeFileSync(join(project, "src", "entry-points.ts"), entryModule(entries));
  writeFileSync(
    join(project, "src", "entry-points-portable.ts"),
    entryModule(entries.filter(({ pkg, specifier }) => !needsOptionalPeer(pkg, specifier))),
  );
  for (const file of ["compose.ts", "types-only.ts"]) copyFileSync(join(fixtures, file), join(project, "src", file));
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      // skipLibCheck as most applications set it: Connect's own .d.ts name DOM types (HeadersInit). Our .d.ts are
      // checked with skipLibCheck off in tsconfig.types-only.json.
      compilerOptions: {
        ...COMPILER_OPTIONS,
        lib: ["es2022"],
        types: ["node"],
        skipLibCheck: true,
        rootDir: "src",
        outDir: "dist",
      },
      include: ["src"],
      exclude: ["src/types-only.ts", "src/entry-points-portable.ts"],
    }),
  );
  writeFileSync(
    join(project, "tsconfig.types-only.json"),
    JSON.stringify({
      compilerOptions: { ...COMPILER_OPTIONS, lib: ["es2022", "dom"], types: [], noEmit: true },
      files: ["src/entry-points-portable.ts", "src/types-only.ts"],
    }),
  );
}

/** The workspace's TypeScript compiler. */
export function workspaceTsc(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve("typescript/package.json")), "bin", "tsc");
}
