// The vitest suite one client kind runs: every case of INTEROP_CASES, one test each, in a world of its own. A case
// the kind lists as a known bug of its own is skipped for that kind only, with the reason in the test's name; a
// sub-case it lists is skipped inside the case (the rest of the case still runs) and the reason is printed.
import { describe, test } from "vitest";
import { INTEROP_CASES } from "../src/cases/index.js";
import type { InteropClientKind } from "../src/client-adapter.js";
import { type InteropCase, runCase } from "../src/driver.js";
import { profileFromEnv } from "../src/profile.js";

export interface SuiteOptions {
  /** Through an @xdskit/xds-relay in front of the control plane. */
  readonly relay?: boolean;
  /** The cases to run; default every case. */
  readonly cases?: readonly InteropCase[];
}

export function defineInteropSuite(kind: InteropClientKind, options: SuiteOptions = {}): void {
  const profile = profileFromEnv();
  const cases = options.cases ?? INTEROP_CASES;
  const through = options.relay ? " through a relay" : "";
  const startedAt = performance.now();
  const trace = process.env.XDSKIT_INTEROP_TRACE
    ? (line: string) => console.log(`[${kind.name} ${((performance.now() - startedAt) / 1000).toFixed(1)} s] ${line}`)
    : undefined;
  describe(`xDS interop cases with ${kind.name}${through} (${profile.name} profile)`, () => {
    for (const testCase of cases) {
      const bug = kind.knownBugs?.[testCase.name];
      if (bug !== undefined) {
        test.skip(`${testCase.name} (known ${kind.name} bug: ${bug})`, () => {});
        continue;
      }
      test(testCase.name, async () => {
        const report = await runCase(kind, testCase, {
          profile,
          ...(trace ? { trace } : {}),
          ...(options.relay ? { relay: true } : {}),
        });
        for (const { subCase, reason } of report.skipped) {
          console.log(`[${kind.name}] ${testCase.name}/${subCase} skipped: known ${kind.name} bug: ${reason}`);
        }
      });
    }
  });
}
