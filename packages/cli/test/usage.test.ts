// Help texts and exit codes of the real binary: 0 success, 1 failure, 2 wrong command line.
import { afterAll, describe, expect, it } from "vitest";
import { killAll, runXdskit } from "./support/xdskit.js";

afterAll(killAll);

describe("xdskit usage", () => {
  it("with no command prints the help to stderr and exits 2", async () => {
    const { code, stdout, stderr } = await runXdskit([]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^Usage: xdskit <command> \[options\]\n/);
    for (const command of ["csds", "bootstrap check", "watch", "serve"]) expect(stderr).toContain(`  ${command} `);
  });

  it("--help and help <command> print to stdout and exit 0", async () => {
    const top = await runXdskit(["--help"]);
    expect([top.code, top.stdout.split("\n")[0]]).toEqual([0, "Usage: xdskit <command> [options]"]);
    const watch = await runXdskit(["help", "watch"]);
    expect([watch.code, watch.stdout.split("\n")[0]]).toEqual([0, "Usage: xdskit watch <type> <name>... [options]"]);
    const serve = await runXdskit(["serve", "--help"]);
    expect([serve.code, serve.stdout.split("\n")[0]]).toEqual([0, "Usage: xdskit serve <dir> [options]"]);
  });

  it("an unknown command, an unknown option, a missing argument or a bad number exit 2 with the reason", async () => {
    const cases: [string[], RegExp][] = [
      [["frobnicate"], /^xdskit: unknown command "frobnicate"/],
      [["csds", "127.0.0.1:1", "--nope"], /^xdskit csds: Unknown option '--nope'/],
      [["csds"], /^xdskit csds: expected one <address>\n\nUsage: xdskit csds/],
      [["csds", "127.0.0.1:1", "--timeout-ms", "soon"], /--timeout-ms must be a non-negative integer, got "soon"/],
      [["bootstrap", "check"], /^xdskit bootstrap check: expected one <file>/],
      [["watch", "cds"], /expected <type> and at least one <name>/],
      [["watch", "xyz", "a", "--server", "127.0.0.1:1"], /unknown resource type "xyz"/],
      [["watch", "cds", "a", "--server", "h:1", "--bootstrap", "b.json"], /give --bootstrap or --server, not both/],
      [["serve", "/tmp", "--port", "70000"], /--port must be at most 65535, got 70000/],
    ];
    const results = await Promise.all(cases.map(([args]) => runXdskit(args)));
    results.forEach(({ code, stderr }, i) => {
      const [args, message] = cases[i]!;
      expect([args, code]).toEqual([args, 2]);
      expect(stderr).toMatch(message);
    });
  });
});
