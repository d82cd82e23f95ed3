// Adds up vitest's JSON reports (`.vitest-result.json`, written by the reporter vitest.shared.ts adds) into the
// one line `npm test` ends with. It counts tests: vitest's own `numFailedTestSuites` also counts every describe
// block around a failed test and its file, so one failed test would count as three.
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

const REPORT = ".vitest-result.json";
const GROUPS = ["packages", "tools", "examples"];

/** What vitest calls a test that did not run: skipped (`.skip`, `skipIf`), todo, or pending. */
const NOT_RUN = new Set(["skipped", "pending", "todo", "disabled"]);

/**
 * A report's passed, failed and skipped tests. A test file that failed with no failed test in it (it did not load,
 * or a hook outside any test threw) counts as one failed test, so that it is not lost. A skipped test is never
 * counted as passed.
 */
export function countTests(report) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const file of report.testResults ?? []) {
    const results = file.assertionResults ?? [];
    passed += results.filter((test) => test.status === "passed").length;
    skipped += results.filter((test) => NOT_RUN.has(test.status)).length;
    const failedTests = results.filter((test) => test.status === "failed").length;
    failed += failedTests > 0 ? failedTests : file.status === "failed" ? 1 : 0;
  }
  return { passed, failed, skipped };
}

function reportFiles(root) {
  return GROUPS.map((group) => join(root, group))
    .filter((dir) => existsSync(dir))
    .flatMap((dir) => readdirSync(dir).map((name) => join(dir, name, REPORT)));
}

/** The sum over every workspace package's report under `root`. */
export function collectTestCounts(root) {
  const total = { passed: 0, failed: 0, skipped: 0 };
  for (const file of reportFiles(root).filter((path) => existsSync(path))) {
    const { passed, failed, skipped } = countTests(JSON.parse(readFileSync(file, "utf8")));
    total.passed += passed;
    total.failed += failed;
    total.skipped += skipped;
  }
  return total;
}

/** Removes every package's report, so that a package whose tests did not run is not counted from a stale one. */
export function clearTestReports(root) {
  for (const file of reportFiles(root)) rmSync(file, { force: true });
}

/** The command that installs etcd (Debian's `etcd-server`), which the etcd tests need. */
export const ETCD_INSTALL_COMMAND = "apt-get install -y etcd-server";

/**
 * The line `npm test` ends with: `N passed, M failed`, then the skipped tests when there are any, and why when etcd
 * was missing (its tests skip themselves then): skipped tests are never counted as passed.
 */
export function summaryLine({ passed, failed, skipped }, { etcdMissing = false } = {}) {
  let line = `${passed} passed, ${failed} failed`;
  if (skipped > 0) line += `, ${skipped} skipped`;
  if (etcdMissing)
    line += ` (etcd is not installed: its tests were skipped; install it with \`${ETCD_INSTALL_COMMAND}\`)`;
  return line;
}
