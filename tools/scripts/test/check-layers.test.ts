// The layer gate (check-layers.mjs) on small trees written for each test: what it refuses, what it lets through.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkRepository, checkSource, relativeImports } from "../check-layers.mjs";

interface Violation {
  readonly file: string;
  readonly line: number;
  readonly specifier: string;
  readonly message: string;
}

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** Writes `files` (path relative to the root: text) under a new temporary directory; returns it. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "check-layers-"));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

type Declaration = Parameters<typeof checkSource>[1];

const LAYERS: Declaration = { layers: [["index.ts"], ["server"], ["streams"], ["."]], generated: ["gen"] };

/** A tree whose every import goes down or sideways. */
const CLEAN: Record<string, string> = {
  "index.ts": 'export { serve } from "./server/serve.js";\n',
  "server/serve.ts":
    'import { open } from "../streams/open.js";\nimport { now } from "./clock.js";\nexport const serve = () => open(now());\n',
  "server/clock.ts": 'import { log } from "../logger.js";\nexport const now = () => (log("now"), 0);\n',
  "streams/open.ts":
    'import type { Message } from "../gen/message.js";\nexport const open = (t: number): Message | number => t;\n',
  "logger.ts": "export const log = (line: string) => line;\n",
  "gen/message.ts": 'import { serve } from "../index.js";\nexport type Message = { serve: typeof serve };\n',
};

function violations(files: Record<string, string>, declaration: Declaration = LAYERS): Violation[] {
  return checkSource(tree(files), declaration).violations;
}

describe("checkSource", () => {
  it("passes a tree whose imports go down or stay in their layer, and records the imports between units", () => {
    const root = tree(CLEAN);
    const result = checkSource(root, LAYERS);
    expect(result.violations).toEqual([]);
    expect([...result.edges].sort()).toEqual(["index.ts -> server/", "server/ -> logger.ts", "server/ -> streams/"]);
  });

  it("refuses an import from a lower folder into a higher one, naming the file, the line and both layers", () => {
    const found = violations({
      ...CLEAN,
      "streams/open.ts":
        '// the stream opener\nimport { serve } from "../server/serve.js";\nexport const open = serve;\n',
    });
    expect(found).toEqual([
      {
        file: "streams/open.ts",
        line: 2,
        specifier: "../server/serve.js",
        message: "streams/ (layer 3) imports server/ (layer 2), a layer above it",
      },
    ]);
  });

  it("counts type-only imports, re-exports and dynamic imports", () => {
    const found = violations({
      ...CLEAN,
      "logger.ts": [
        'import type { serve } from "./server/serve.js";',
        'export { open } from "./streams/open.js";',
        'export const later = () => import("./server/clock.js");',
        "export const log = (line: string): string | typeof serve => line;",
        "",
      ].join("\n"),
    });
    expect(found.map((v) => `${v.file}:${v.line} ${v.specifier}`)).toEqual([
      "logger.ts:1 ./server/serve.js",
      "logger.ts:2 ./streams/open.js",
      "logger.ts:3 ./server/clock.js",
    ]);
  });

  it("ignores import-like text in comments and strings", () => {
    const found = violations({
      ...CLEAN,
      "logger.ts": [
        '// import { serve } from "./server/serve.js";',
        "/* export * from './streams/open.js'; */",
        "export const text = 'import { x } from \"./server/clock.js\"';",
        "export const log = (line: string) => line;",
        "",
      ].join("\n"),
    });
    expect(found).toEqual([]);
  });

  it("places a root file named in a layer there, and the other root files in the '.' layer", () => {
    const found = violations({ ...CLEAN, "logger.ts": 'import "./index.js";\nexport const log = (l: string) => l;\n' });
    expect(found.map((v) => v.message)).toEqual(["logger.ts (layer 4) imports index.ts (layer 1), a layer above it"]);
  });

  it("refuses a folder that is in no layer", () => {
    const found = violations({ ...CLEAN, "extra/thing.ts": "export const thing = 1;\n" });
    expect(found.map((v) => `${v.file}: ${v.message}`)).toEqual([
      "extra/thing.ts: extra/ is in no layer: add it to layers.json",
    ]);
  });

  it("leaves generated folders unchecked and importable from every layer", () => {
    const result = checkSource(tree(CLEAN), LAYERS);
    expect(result.violations).toEqual([]);
    expect([...result.edges].some((edge: string) => edge.includes("gen/"))).toBe(false);
  });

  it("refuses a folder in a source declared flat, but not a generated one", () => {
    const files = { "a.ts": 'import "./b.js";\n', "b.ts": "export {};\n", "gen/x.ts": "export {};\n" };
    expect(violations(files, { generated: ["gen"] })).toEqual([]);
    expect(violations(files, "flat").map((v) => v.message)).toEqual([
      "declared flat, but has the folder gen/: declare its layers in layers.json",
    ]);
  });

  it("does not check a pending source", () => {
    expect(
      violations({ ...CLEAN, "streams/open.ts": 'import "../server/serve.js";\n' }, { pending: "moving" }),
    ).toEqual([]);
  });
});

describe("checkRepository", () => {
  it("refuses a src/ that layers.json does not declare, and a declaration without its directory", () => {
    const root = tree({
      "packages/a/src/index.ts": "export {};\n",
      "packages/b/src/index.ts": "export {};\n",
      "tools/c/src/main.ts": "export {};\n",
    });
    const failures = checkRepository(root, {
      $comment: "not a source",
      "packages/a/src": "flat",
      "tools/c/src": "flat",
      "packages/gone/src": "flat",
    });
    expect(failures).toEqual([
      'packages/b/src: not declared in layers.json (declare its layers, or "flat")',
      "packages/gone/src: declared in layers.json, but there is no such directory",
    ]);
  });

  it("reports each upward import with its source's path", () => {
    const root = tree(
      Object.fromEntries(
        Object.entries({ ...CLEAN, "streams/open.ts": 'import "../server/serve.js";\n' }).map(([path, text]) => [
          `packages/p/src/${path}`,
          text,
        ]),
      ),
    );
    expect(checkRepository(root, { "packages/p/src": LAYERS })).toEqual([
      'packages/p/src/streams/open.ts:1: streams/ (layer 3) imports server/ (layer 2), a layer above it ("../server/serve.js")',
    ]);
  });
});

describe("relativeImports", () => {
  it("lists relative specifiers only, with their lines", () => {
    const text = 'import { a } from "@scope/pkg";\nimport { b } from "node:fs";\n\nimport { c } from "../c.js";\n';
    expect(relativeImports(text)).toEqual([{ specifier: "../c.js", line: 4 }]);
  });
});
