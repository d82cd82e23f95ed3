import { defineProject } from "vitest/config";
import { sharedTestOptions } from "../../vitest.shared.ts";

export default defineProject({
  test: {
    ...sharedTestOptions,
    setupFiles: [...sharedTestOptions.setupFiles, "./test/support/load-lazy-modules.ts"],
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
  },
});
