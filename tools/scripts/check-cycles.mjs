#!/usr/bin/env node
// Fails when any package's or tool's source has a circle of imports (type-only imports count): the layering
// described in docs/architecture.md must stay a line. Generated code (packages/protos) is left out.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

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
process.exit(result.status ?? 1);
