// `npm test`'s closing line counts tests. Real vitest runs a project with one failing test nested in two describe
// blocks, one passing test, two skipped tests and a file that does not load; the count must be 1 passed, 2 failed
// (vitest's own numFailedTests + numFailedTestSuites would say 5), 2 skipped (never counted as passed).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { clearTestReports, collectTestCounts, countTests, summaryLine } from "../test-report.mjs";

const fixture = fileURLToPath(new URL("./fixtures/failures", import.meta.url));
const vitest = join(dirname(createRequire(import.meta.url).resolve("vitest/package.json")), "vitest.mjs");
const work = mkdtempSync(join(tmpdir(), "xdskit-test-report-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function runFixture(): Record<string, unknown> {
  const output = join(work, "report.json");
  const run = spawnSync(
    process.execPath,
    [vitest, "run", "--root", fixture, "--reporter=json", `--outputFile=${output}`],
    { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } },
  );
  expect(run.status).toBe(1);
  return JSON.parse(readFileSync(output, "utf8"));
}

describe("countTests", () => {
  // A vitest run of its own: about 1.5 s, far more on a machine busy with the rest of npm test.
  it("counts a failed test once, a file that did not load as one failure, and skipped tests apart", {
    timeout: 90_000,
  }, () => {
    const report = runFixture();
    // What the old count added up, to show the fixture holds what this test is about.
    expect([report.numFailedTests, report.numFailedTestSuites]).toEqual([1, 4]);
    expect(countTests(report)).toEqual({ passed: 1, failed: 2, skipped: 2 });
  });

  it("adds up the reports of every package under packages/, tools/ and examples/, and clears them", () => {
    const report = (passed: number, failed: number, skipped = 0) => ({
      testResults: [
        {
          status: failed > 0 ? "failed" : "passed",
          assertionResults: [
            ...Array.from({ length: passed }, () => ({ status: "passed" })),
            ...Array.from({ length: failed }, () => ({ status: "failed" })),
            ...Array.from({ length: skipped }, () => ({ status: "skipped" })),
          ],
        },
      ],
    });
    const reports = { "packages/a": report(3, 1, 4), "tools/b": report(2, 0), "examples/c": report(0, 2) };
    for (const [dir, content] of Object.entries(reports)) {
      mkdirSync(join(work, dir), { recursive: true });
      writeFileSync(join(work, dir, ".vitest-result.json"), JSON.stringify(content));
    }
    mkdirSync(join(work, "packages", "no-report"), { recursive: true });
    expect(collectTestCounts(work)).toEqual({ passed: 5, failed: 3, skipped: 4 });
    clearTestReports(work);
    expect(collectTestCounts(work)).toEqual({ passed: 0, failed: 0, skipped: 0 });
  });
});

describe("summaryLine", () => {
  it("says how many passed and failed, then the skipped tests, and why when etcd was missing", () => {
    expect(summaryLine({ passed: 5, failed: 0, skipped: 0 })).toBe("5 passed, 0 failed");
    expect(summaryLine({ passed: 5, failed: 1, skipped: 3 })).toBe("5 passed, 1 failed, 3 skipped");
    expect(summaryLine({ passed: 5, failed: 0, skipped: 40 }, { etcdMissing: true })).toBe(
      "5 passed, 0 failed, 40 skipped (etcd is not installed: its tests were skipped; install it with `apt-get install -y etcd-server`)",
    );
  });
});
