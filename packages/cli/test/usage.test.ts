// Help texts, the version and exit codes of the real binary: 0 success, 1 failure, 2 wrong command line, with our
// own words for every command-line mistake.
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { killAll, runXdskit } from "./support/xdskit.js";

afterAll(killAll);

describe("xdskit usage", () => {
  it("with no command prints the help to stderr and exits 2", async () => {
    const { code, stdout, stderr } = await runXdskit([]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^Usage: xdskit <command> \[options\]\n/);
    for (const command of ["csds", "bootstrap check", "watch", "list", "serve"])
      expect(stderr).toContain(`  ${command} `);
  });

  it("--version, -v and --version after any command print the package's version", async () => {
    const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    const lines = [
      ["--version"],
      ["-v"],
      ["serve", "--version"],
      ["bootstrap", "check", "--version"],
      ["relay", "--version"],
    ];
    const results = await Promise.all(lines.map((args) => runXdskit(args)));
    expect(results.map((r) => [r.code, r.stdout])).toEqual(lines.map(() => [0, `xdskit ${version} (@xdskit/cli)\n`]));
  });

  it("a bare command group prints its commands (exit 2); with --help, on stdout (exit 0)", async () => {
    const [bare, help, unknown] = await Promise.all([
      runXdskit(["bootstrap"]),
      runXdskit(["bootstrap", "--help"]),
      runXdskit(["bootstrap", "frob"]),
    ]);
    const usage = /^Usage: xdskit bootstrap <command> \[options\]\n\nCommands:\n {2}bootstrap check +validate/;
    expect([bare.code, bare.stdout]).toEqual([2, ""]);
    expect(bare.stderr).toMatch(usage);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(usage);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^xdskit: unknown command "bootstrap frob"\n\nUsage: xdskit bootstrap <command>/);
  });

  it("--help and help <command> print to stdout and exit 0", async () => {
    const top = await runXdskit(["--help"]);
    expect([top.code, top.stdout.split("\n")[0]]).toEqual([0, "Usage: xdskit <command> [options]"]);
    const watch = await runXdskit(["help", "watch"]);
    expect([watch.code, watch.stdout.split("\n")[0]]).toEqual([0, "Usage: xdskit watch <type> <name>... [options]"]);
    const serve = await runXdskit(["serve", "--help"]);
    expect([serve.code, serve.stdout.split("\n")[0]]).toEqual([0, "Usage: xdskit serve <dir> [options]"]);
  });

  // Nineteen runs of the binary at once: about 7 s alone, 19 s on the shared 2-core machine under npm test.
  it("an unknown command, an unknown option, a missing argument or a bad number exit 2 with the reason", {
    timeout: 90_000,
  }, async () => {
    const cases: [string[], RegExp][] = [
      [["frobnicate"], /^xdskit: unknown command "frobnicate"/],
      [["csds", "127.0.0.1:1", "--nope"], /^xdskit csds: unknown option --nope\n\nUsage: xdskit csds/],
      [["watch", "cds", "a", "--jsn"], /^xdskit watch: unknown option --jsn \(did you mean --json\?\)\n/],
      [["watch", "cds", "a", "--count"], /^xdskit watch: --count needs a value\n/],
      [["csds", "127.0.0.1:1", "--json=yes"], /^xdskit csds: --json takes no value\n/],
      [
        ["watch", "cds", "a", "--server", "h:1", "--timeout", "soon"],
        /--timeout must be a duration such as 500ms, 10s or 2m, got "soon"/,
      ],
      [["watch", "cds", "*", "b", "--server", "h:1"], /"\*" watches every resource: give it alone/],
      [["watch", "cds", "a", "--delta"], /--delta goes with --server/],
      [
        ["watch", "cds", "a"],
        /no xDS server: give --server <host:port> or --bootstrap <file>, or set GRPC_XDS_BOOTSTRAP/,
      ],
      [["list"], /^xdskit list: expected one <type>/],
      [["serve", "/tmp", "--tls-key", "k.pem"], /--tls-cert and --tls-key go together/],
      [["csds"], /^xdskit csds: expected one <address>\n\nUsage: xdskit csds/],
      [["csds", "127.0.0.1:1", "--timeout-ms", "soon"], /--timeout-ms must be a non-negative integer, got "soon"/],
      [["bootstrap", "check"], /^xdskit bootstrap check: expected a <file>, or GRPC_XDS_BOOTSTRAP/],
      [["watch", "cds"], /expected <type> and at least one <name>/],
      [["watch", "xyz", "a", "--server", "127.0.0.1:1"], /unknown resource type "xyz"/],
      [["watch", "cds", "a", "--server", "h:1", "--bootstrap", "b.json"], /give --bootstrap or --server, not both/],
      [["serve", "/tmp", "--port", "70000"], /--port must be at most 65535, got 70000/],
    ];
    const noBootstrap = { GRPC_XDS_BOOTSTRAP: "", GRPC_XDS_BOOTSTRAP_CONFIG: "" };
    const results = await Promise.all(cases.map(([args]) => runXdskit(args, noBootstrap)));
    results.forEach(({ code, stderr }, i) => {
      const [args, message] = cases[i]!;
      expect([args, code]).toEqual([args, 2]);
      expect(stderr).toMatch(message);
    });
  });
});
