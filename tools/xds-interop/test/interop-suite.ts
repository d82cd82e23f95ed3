// The vitest suite one client kind runs: every case of INTEROP_CASES, one test each, in a world of its own. A case
// the kind lists as a known bug of its own is skipped for that kind only, with the reason in the test's name; a
// sub-case it lists is skipped inside the case (the rest of the case still runs) and the reason is printed.
import { describe, test } from "vitest";
import { INTEROP_CASES } from "../src/cases/index.js";
import type { InteropClientKind } from "../src/client-adapter.js";
import { runCase } from "../src/driver.js";
import { profileFromEnv } from "../src/profile.js";

export function defineInteropSuite(kind: InteropClientKind): void {
  const profile = profileFromEnv();
  const startedAt = performance.now();
  const trace = process.env.XDSKIT_INTEROP_TRACE
    ? (line: string) => console.log(`[${kind.name} ${((performance.now() - startedAt) / 1000).toFixed(1)} s] ${line}`)
    : undefined;
  describe(`xDS interop cases with ${kind.name} (${profile.name} profile)`, () => {
    for (const testCase of INTEROP_CASES) {
      const bug = kind.knownBugs?.[testCase.name];
      if (bug !== undefined) {
        test.skip(`${testCase.name} (known ${kind.name} bug: ${bug})`, () => {});
        continue;
      }
      test(testCase.name, async () => {
        const report = await runCase(kind, testCase, { profile, ...(trace ? { trace } : {}) });
        for (const { subCase, reason } of report.skipped) {
          console.log(`[${kind.name}] ${testCase.name}/${subCase} skipped: known ${kind.name} bug: ${reason}`);
        }
      });
    }
  });
}
