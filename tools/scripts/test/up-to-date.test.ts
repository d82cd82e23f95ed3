// The second `npm run demo` (or an example's `npm run setup`) skips `pnpm install` and the build when nothing they
// read changed: these are the checks that decide it, on a small workspace made here.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildInputsKey, installIsCurrent, readStamp, workspaceClosure, writeStamp } from "../up-to-date.mjs";

const root = mkdtempSync(join(tmpdir(), "xdskit-up-to-date-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function pkg(dir: string, name: string, deps: Record<string, string> = {}): void {
  mkdirSync(join(root, dir, "src"), { recursive: true });
  mkdirSync(join(root, dir, "dist"), { recursive: true });
  writeFileSync(
    join(root, dir, "package.json"),
    JSON.stringify({ name, scripts: { build: "tsc -b" }, dependencies: deps }),
  );
  writeFileSync(join(root, dir, "src", "index.ts"), "export {};\n");
}

for (const file of ["package.json", "tsconfig.base.json", "turbo.json"]) writeFileSync(join(root, file), "{}");
writeFileSync(join(root, "pnpm-lock.yaml"), "lockfileVersion: '9.0'\n");
pkg("packages/a", "@t/a", { "@t/b": "workspace:^", left: "^1.0.0" });
pkg("packages/b", "@t/b");
pkg("packages/c", "@t/c");
pkg("tools/demo", "@t/demo", { "@t/a": "workspace:*" });

describe("up-to-date checks", () => {
  it("the install is current only while node_modules was installed from the lockfile as it is", () => {
    expect(installIsCurrent(root)).toBe(false);
    mkdirSync(join(root, "node_modules", ".pnpm"), { recursive: true });
    writeFileSync(join(root, "node_modules", ".pnpm", "lock.yaml"), "lockfileVersion: '9.0'\n");
    expect(installIsCurrent(root)).toBe(true);
    writeFileSync(join(root, "pnpm-lock.yaml"), "lockfileVersion: '9.0'\nimporters: {}\n");
    expect(installIsCurrent(root)).toBe(false);
  });

  it("a package's closure follows workspace: dependencies only", () => {
    expect(workspaceClosure(root, "@t/demo")).toEqual(
      ["packages/a", "packages/b", "tools/demo"].map((dir) => join(root, dir)),
    );
    expect(() => workspaceClosure(root, "@t/nope")).toThrow(/no workspace package named @t\/nope/);
  });

  it("the build key changes with a file of the closure, not with one outside it or with build output", () => {
    const dirs = workspaceClosure(root, "@t/demo");
    const key = buildInputsKey(root, dirs);
    expect(buildInputsKey(root, dirs)).toBe(key);
    writeFileSync(join(root, "packages", "c", "src", "index.ts"), "export const c = 1;\n");
    writeFileSync(join(root, "packages", "b", "dist", "index.js"), "export {};\n");
    writeFileSync(join(root, "packages", "b", "tsconfig.tsbuildinfo"), "{}");
    expect(buildInputsKey(root, dirs)).toBe(key);
    // Same size, new mtime: a checkout or an editor's save.
    utimesSync(join(root, "packages", "b", "src", "index.ts"), new Date(), new Date(Date.now() + 5_000));
    const touched = buildInputsKey(root, dirs);
    expect(touched).not.toBe(key);
    writeStamp(root, "demo", touched);
    expect(readStamp(root, "demo")).toBe(touched);
    rmSync(join(root, "packages", "b", "dist"), { recursive: true });
    expect(buildInputsKey(root, dirs)).toBe("missing output");
  });
});
