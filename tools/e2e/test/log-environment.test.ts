// Logging from the environment (docs/logging.md), across the suite: a child process makes one of each thing that
// takes a Logger (control plane, xDS client, connect-xds transport, DPDS wrapper, relay, etcd source, LRS client)
// without a `logger` option, and stderr shows what XDSKIT_LOG or GRPC_VERBOSITY/GRPC_TRACE turned on.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const fixture = fileURLToPath(new URL("./fixtures/log-everything.mjs", import.meta.url));
// Each test runs the fixture once or twice: about 1 s each on a quiet machine, 3 to 5 s with 25 processes competing
// for the 2 cores (a test of three runs took 13.8 s in a full npm test, hence two at most). A run may take half a
// test's budget before it counts as hung.
const TIMEOUT_MS = 60_000;
const RUN_TIMEOUT_MS = TIMEOUT_MS / 2;

function run(env: Record<string, string>): { stdout: string; stderr: string } {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^(XDSKIT_LOG|GRPC_VERBOSITY|GRPC_TRACE)$/.test(key)),
  );
  const result = spawnSync(process.execPath, [fixture], {
    env: { ...clean, ...env },
    encoding: "utf8",
    timeout: RUN_TIMEOUT_MS,
  });
  if (result.status !== 0) throw new Error(`exit ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return { stdout: result.stdout, stderr: result.stderr };
}

/** The components that wrote at least one line at `level`, by the prefix each puts first. */
function components(stderr: string, level: string): string[] {
  const found = new Set<string>();
  for (const line of stderr.split("\n")) {
    const match = new RegExp(`^\\S+Z ${level} \\[([a-z-]+)`).exec(line);
    if (match?.[1]) found.add(match[1] === "lrs" ? "orca-lrs-bridge" : match[1]);
  }
  return [...found].sort();
}

const TIME_LEVEL = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (ERROR|WARN|INFO|DEBUG) \[/;

describe("logging from the environment", { timeout: TIMEOUT_MS }, () => {
  it("without XDSKIT_LOG or GRPC_VERBOSITY, nothing is written", () => {
    expect(run({}).stderr).toBe("");
  });

  it("XDSKIT_LOG=debug: every package logs, each line with its time and level; a failed call says why", () => {
    const { stderr } = run({ XDSKIT_LOG: "debug" });
    expect(components(stderr, "(?:DEBUG|INFO|WARN)")).toEqual([
      "connect-xds",
      "control-plane",
      "dpds-wrapper",
      "etcd-source",
      "orca-lrs-bridge",
      "xds-client",
      "xds-relay",
    ]);
    expect(stderr.split("\n").filter((l) => l !== "" && !TIME_LEVEL.test(l))).toEqual([]);
    expect(stderr).toMatch(
      /DEBUG \[connect-xds xds:\/\/\/logs\] envoy\.service\.status\.v3\.ClientStatusDiscoveryService\/FetchClientStatus failed: \[unavailable\] .*127\.0\.0\.1:9/,
    );
    expect(stderr).toMatch(/INFO \[connect-xds xds:\/\/\/logs\] routes updated: clusters logs/);
    expect(stderr).not.toMatch(/ TRACE /);
  });

  it("XDSKIT_LOG=warn,connect-xds=debug: connect-xds at debug, the others at warn", () => {
    const { stderr } = run({ XDSKIT_LOG: "warn,connect-xds=debug" });
    expect(components(stderr, "(?:DEBUG|INFO)")).toEqual(["connect-xds"]);
  });

  it("GRPC_VERBOSITY=DEBUG with GRPC_TRACE=xds_client: the xDS client (and its DPDS layer, its load reports) at debug, the others at info", () => {
    const { stderr } = run({ GRPC_VERBOSITY: "DEBUG", GRPC_TRACE: "xds_client" });
    expect(components(stderr, "DEBUG")).toEqual(["orca-lrs-bridge", "xds-client"]);
    expect(components(stderr, "INFO")).toEqual([
      "connect-xds",
      "control-plane",
      "dpds-wrapper",
      "etcd-source",
      "xds-relay",
    ]);
  });

  it("GRPC_TRACE without GRPC_VERBOSITY=DEBUG turns nothing on, as in grpc-js; a tracer named with - stays off", () => {
    expect(run({ GRPC_TRACE: "all" }).stderr).toBe("");
    expect(components(run({ GRPC_VERBOSITY: "DEBUG", GRPC_TRACE: "all,-xds_resolver" }).stderr, "DEBUG")).not.toContain(
      "connect-xds",
    );
  });

  it("an explicit logger wins over the environment; a bad value is told once", () => {
    const explicit = run({ XDSKIT_LOG: "debug", EXPLICIT_LOGGER: "1" });
    expect(explicit.stdout).toMatch(/^explicit: \[control-plane\]/m);
    expect(components(explicit.stderr, "(?:DEBUG|INFO|WARN)")).not.toContain("control-plane");
    const bad = run({ XDSKIT_LOG: "verbose" });
    expect(bad.stderr).toBe(
      'xdskit: XDSKIT_LOG="verbose": "verbose" is not a level (error, warn, info, debug, trace, off); see docs/logging.md\n',
    );
  });
});
