// A process that only watches stays alive while its server is down, as a process with an active gRPC call does, and
// exits once the client is closed; with `keepProcessAlive: false` it exits on its own during the backoff, as before.
// Checked on the build in a fresh Node, as a user's script runs it.
//
// Steps: (1) take a port on 127.0.0.1 and close it; (2) a child process creates a client (retries every 50 ms) for
// that port, watches a cluster, and prints a line for each failed attempt (its logger's warning) and each watcher
// event; (3) default: expect at least three failed attempts (two retries) while the child runs, then SIGUSR2 makes the
// child close the client, and it exits with code 0 and nothing else pending; (4) `keepProcessAlive: false`: the child
// exits by itself with code 0 after its first failed attempt, without being signalled.
import { type ChildProcess, spawn } from "node:child_process";
import * as net from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Runs in the child (cwd: this package, so "@xdskit/xds-client" is the build). */
const CHILD = `
const [port, mode] = process.argv.slice(1);
const xds = await import("@xdskit/xds-client");
const { createXdsClientWithInternals } = await import("@xdskit/xds-client/internal");
const say = (line) => process.stdout.write(line + "\\n");
const client = createXdsClientWithInternals(
  {
    bootstrap: { xds_servers: [{ server_uri: "127.0.0.1:" + port, channel_creds: [{ type: "insecure" }] }], node: { id: "n" } },
    env: {},
    logger: { error() {}, info() {}, debug() {}, warn: (m) => { if (m.includes("failed with no responses")) say("failed"); } },
    ...(mode === "off" ? { keepProcessAlive: false } : {}),
  },
  { backoff: { initialMs: 50, maxMs: 50 } },
);
const cancel = client.watch(xds.clusterResourceType, "c", {
  onResourceChanged: (r) => say(r.ok ? "resource" : "error " + r.error.code),
  onAmbientError: (e) => say("ambient " + e.code),
});
process.on("SIGUSR2", () => {
  if (mode === "cancel") {
    cancel();
    say("cancelled");
  } else client.close().then(() => say("closed"));
});
say("watching");
`;

interface Child {
  readonly process: ChildProcess;
  readonly lines: string[];
  readonly exited: Promise<number | null>;
}

function start(port: number, mode: "default" | "off" | "cancel"): Child {
  const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD, String(port), mode], {
    cwd: packageDir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => lines.push(...chunk.toString().split("\n").filter(Boolean)));
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      if (stderr !== "") lines.push(`stderr: ${stderr}`);
      resolve(code);
    }),
  );
  return { process: child, lines, exited };
}

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves true once `condition` holds, false if the child exits first. */
async function whileRunning(child: Child, condition: () => boolean): Promise<boolean> {
  let exited = false;
  void child.exited.then(() => {
    exited = true;
  });
  while (!condition()) {
    if (exited) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

describe("a process that only watches", () => {
  it.each([
    ["the client closes", "default", "closed"],
    ["its last watch is cancelled", "cancel", "cancelled"],
  ] as const)(
    "stays alive through failed attempts and retries while the server is down, and exits once %s",
    async (_, mode, last) => {
      const child = start(await closedPort(), mode);
      try {
        const failures = () => child.lines.filter((l) => l === "failed").length;
        const alive = await whileRunning(child, () => failures() >= 3);
        expect({ alive, lines: child.lines }).toMatchObject({ alive: true });
        expect(child.lines.slice(0, 3)).toEqual(["watching", "failed", "error 14"]);
        child.process.kill("SIGUSR2");
        expect(await child.exited).toBe(0);
        expect(child.lines.at(-1)).toBe(last);
      } finally {
        child.process.kill();
      }
    },
  );

  it("exits on its own during the backoff with keepProcessAlive: false", async () => {
    const child = start(await closedPort(), "off");
    try {
      expect(await child.exited).toBe(0);
      expect(child.lines).toEqual(["watching", "failed", "error 14"]);
    } finally {
      child.process.kill();
    }
  });
}, 60_000);
