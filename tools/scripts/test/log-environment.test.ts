// The packages that take a Logger read the environment's log settings with one file, copied into each package that
// depends on no other of ours (docs/logging.md): the copies must not drift apart.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const COPIES = [
  "packages/xds-client/src/observability/log-environment.ts",
  "packages/control-plane/src/log-environment.ts",
  "packages/orca-lrs-bridge/src/log-environment.ts",
];

describe("log-environment.ts", () => {
  it("is the same file in every package that carries it", () => {
    const [first, ...others] = COPIES.map((path) => readFileSync(join(root, path), "utf8"));
    expect(others.map((text, i) => [COPIES[i + 1], text === first])).toEqual(COPIES.slice(1).map((p) => [p, true]));
  });
});
