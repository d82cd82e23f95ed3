// Settings every package's vitest.config.ts spreads in. The JSON report is what
// tools/scripts/run.mjs adds up into the suite's one-line summary.
import { fileURLToPath } from "node:url";

export const sharedTestOptions = {
  // One fast-check seed for the whole gate (see the file).
  setupFiles: [fileURLToPath(new URL("./vitest.fast-check.ts", import.meta.url))],
  reporters: ["default", ["json", { outputFile: ".vitest-result.json" }]],
  teardownTimeout: 5_000,
  // Generous: CI machines may be loaded; every wait inside a test has its own, shorter bound.
  testTimeout: 20_000,
} as const;
