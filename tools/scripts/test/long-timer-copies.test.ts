// The long-timer helper is copied into every package that sets timers from configuration, xDS, a peer or a caller
// (docs/decisions.md#long-timers): each copy must be the same file, byte for byte, so that the one test of its
// behaviour (packages/xds-client/test/long-timer.test.ts) holds for every copy.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const packagesDir = fileURLToPath(new URL("../../../packages", import.meta.url));
/** Where a package keeps its copy: src/long-timer.ts, or long-timer.ts in one of src's folders. */
function copyOf(name: string): string | undefined {
  const src = join(packagesDir, name, "src");
  if (!existsSync(src)) return undefined;
  const folders = readdirSync(src, { withFileTypes: true }).filter((entry) => entry.isDirectory());
  return ["long-timer.ts", ...folders.map((folder) => `${folder.name}/long-timer.ts`)]
    .map((path) => `src/${path}`)
    .find((path) => existsSync(join(packagesDir, name, path)));
}

const copies = new Map(
  readdirSync(packagesDir)
    .sort()
    .flatMap((name) => {
      const path = copyOf(name);
      return path === undefined ? [] : [[name, path] as const];
    }),
);
const withCopy = [...copies.keys()];

describe("long-timer copies", () => {
  it("are in the packages that set such timers", () => {
    expect(withCopy).toEqual([
      "cli",
      "connect-xds",
      "connect-xds-server",
      "control-plane",
      "dpds-wrapper",
      "etcd-source",
      "orca-lrs-bridge",
      "xds-client",
      "xds-relay",
    ]);
  });

  it("has its behaviour tested in xds-client", () => {
    expect(existsSync(join(packagesDir, "xds-client/test/long-timer.test.ts"))).toBe(true);
  });

  it("is the same in each of them", () => {
    const [first, ...rest] = withCopy;
    const reference = readFileSync(join(packagesDir, first!, copies.get(first!)!), "utf8");
    for (const name of rest) {
      const file = copies.get(name)!;
      expect(readFileSync(join(packagesDir, name, file), "utf8"), `packages/${name}/${file}`).toBe(reference);
    }
  });
});
