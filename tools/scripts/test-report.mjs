// Adds up vitest's JSON reports (`.vitest-result.json`, written by the reporter vitest.shared.ts adds) into the
// one line `npm test` ends with. It counts tests: vitest's own `numFailedTestSuites` also counts every describe
// block around a failed test and its file, so one failed test would count as three.
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

const REPORT = ".vitest-result.json";
const GROUPS = ["packages", "tools", "examples"];

/**
 * A report's passed and failed tests. A test file that failed with no failed test in it (it did not load, or a
 * hook outside any test threw) counts as one failed test, so that it is not lost.
 */
export function countTests(report) {
  let passed = 0;
  let failed = 0;
  for (const file of report.testResults ?? []) {
    const results = file.assertionResults ?? [];
    passed += results.filter((test) => test.status === "passed").length;
    const failedTests = results.filter((test) => test.status === "failed").length;
    failed += failedTests > 0 ? failedTests : file.status === "failed" ? 1 : 0;
  }
  return { passed, failed };
}

function reportFiles(root) {
  return GROUPS.map((group) => join(root, group))
    .filter((dir) => existsSync(dir))
    .flatMap((dir) => readdirSync(dir).map((name) => join(dir, name, REPORT)));
}

/** The sum over every workspace package's report under `root`. */
export function collectTestCounts(root) {
  const total = { passed: 0, failed: 0 };
  for (const file of reportFiles(root).filter((path) => existsSync(path))) {
    const { passed, failed } = countTests(JSON.parse(readFileSync(file, "utf8")));
    total.passed += passed;
    total.failed += failed;
  }
  return total;
}

/** Removes every package's report, so that a package whose tests did not run is not counted from a stale one. */
export function clearTestReports(root) {
  for (const file of reportFiles(root)) rmSync(file, { force: true });
}
