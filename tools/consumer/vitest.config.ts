import { defineProject } from "vitest/config";
import { sharedTestOptions } from "../../vitest.shared.ts";

// npm install may fetch from the registry with a cold cache: the steps keep their own, generous bounds.
export default defineProject({
  test: { ...sharedTestOptions, include: ["test/**/*.test.ts"], testTimeout: 5 * 60_000, hookTimeout: 10 * 60_000 },
});
