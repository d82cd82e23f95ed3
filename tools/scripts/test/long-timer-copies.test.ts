// The long-timer helper is copied into every package that sets timers from configuration, xDS, a peer or a caller
// (docs/decisions.md#long-timers): each copy must be the same file, byte for byte, so that the one test of its
// behaviour (packages/xds-client/test/long-timer.test.ts) holds for every copy.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const packagesDir = fileURLToPath(new URL("../../../packages", import.meta.url));
const withCopy = readdirSync(packagesDir)
  .filter((name) => existsSync(join(packagesDir, name, "src/long-timer.ts")))
  .sort();

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

  it.each(["src/long-timer.ts"])("%s is the same in each of them", (file) => {
    const [first, ...rest] = withCopy;
    const reference = readFileSync(join(packagesDir, first!, file), "utf8");
    for (const name of rest) {
      expect(readFileSync(join(packagesDir, name, file), "utf8"), `packages/${name}/${file}`).toBe(reference);
    }
  });
});
