#!/usr/bin/env node
// Fails when any package's or tool's source has a circle of imports (type-only imports count): the layering
// described in docs/architecture.md must stay a line. Generated code (packages/protos) is left out. Then the layer
// gate (check-layers.mjs): within a src/, no import runs up the layers its package declares in layers.json.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkRepository } from "./check-layers.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const sources = ["packages", "tools", "examples"].flatMap((group) =>
  readdirSync(join(root, group))
    .filter((name) => name !== "protos" && existsSync(join(root, group, name, "src")))
    .map((name) => `${group}/${name}/src`),
);
const madge = [
  "exec",
  "madge",
  "--circular",
  "--no-spinner",
  "--no-color",
  "--extensions",
  "ts",
  "--ts-config",
  "tsconfig.base.json",
];
const result = spawnSync("pnpm", [...madge, ...sources], { cwd: root, stdio: "inherit" });
const declarations = JSON.parse(readFileSync(join(root, "tools", "scripts", "layers.json"), "utf8"));
const failures = checkRepository(root, declarations);
for (const failure of failures) console.error(failure);
if (failures.length > 0) {
  console.error(`${failures.length} import(s) against tools/scripts/layers.json (docs/architecture.md#layers)`);
} else {
  console.log("No import runs up a declared layer.");
}
process.exit(result.status === 0 && failures.length === 0 ? 0 : 1);
