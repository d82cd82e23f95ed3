// Settings every package's vitest.config.ts spreads in. The JSON report is what
// tools/scripts/run.mjs adds up into the suite's one-line summary.
export const sharedTestOptions = {
  reporters: ["default", ["json", { outputFile: ".vitest-result.json" }]],
  teardownTimeout: 5_000,
} as const;
