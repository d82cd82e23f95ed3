// The example as its README runs it, on 127.0.0.1 with free ports instead of the fixed 18001 and 50061: certs (with
// serve's address), the server (port 0: it listens at once and serves once its Listener arrives), serve on a copy of
// serve/ whose server Listener and endpoint name the server's port, then the client. Checks that alice's call is
// answered over mTLS and mallory's is denied by the server's RBAC policy, both taken from the xDS server.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const here = fileURLToPath(new URL("..", import.meta.url));
const scripts: Record<string, string> = JSON.parse(readFileSync(join(here, "package.json"), "utf8")).scripts;
const work = mkdtempSync(join(tmpdir(), "xdskit-mesh-"));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
  rmSync(join(here, "certs"), { recursive: true, force: true });
});

/** Starts a command of the example; `waitFor` resolves once its stdout matches. */
function start(command: string, args: readonly string[]) {
  const child = spawn(command, args, { cwd: here, stdio: "pipe" });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const waitFor = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const timer = setInterval(() => {
        if (pattern.test(stdout)) {
          clearInterval(timer);
          resolve(stdout);
        } else if (child.exitCode !== null) {
          clearInterval(timer);
          reject(new Error(`${command} ${args.join(" ")} exited ${child.exitCode}:\n${stdout}\n${stderr}`));
        }
      }, 20);
    });
  return { child, waitFor, stderr: () => stderr };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

describe("examples/mesh", () => {
  it("the README's commands are the package's scripts: setup, certs, serve, server, client", () => {
    const readme = readFileSync(join(here, "README.md"), "utf8");
    const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const commands = block
      .split("\n")
      .map((line) => line.replace(/#.*$/, "").trim())
      .filter((line) => line !== "");
    expect(commands).toEqual([
      "cd examples/mesh",
      "npm run setup",
      "npm run certs",
      "npm run serve",
      "npm run server",
      "npm run client",
    ]);
    expect(scripts.serve).toBe("xdskit serve serve --port 18001");
  });

  it("alice's call is answered over mTLS, mallory's denied by RBAC: the client's and the server's security from xDS", async () => {
    const servePort = await freePort();
    const certs = spawnSync("node", [...scripts.certs!.split(" ").slice(1), "--xds", `127.0.0.1:${servePort}`], {
      cwd: here,
      encoding: "utf8",
    });
    expect(certs.status).toBe(0);

    const server = start("node", [...scripts.server!.split(" ").slice(1), "--port", "0"]);
    const listening = await server.waitFor(/listening on 127\.0\.0\.1:\d+/);
    const serverPort = /127\.0\.0\.1:(\d+)/.exec(listening)?.[1] ?? "";

    const folder = join(work, "serve");
    cpSync(join(here, "serve"), folder, { recursive: true });
    for (const file of readdirSync(folder)) {
      const path = join(folder, file);
      writeFileSync(path, readFileSync(path, "utf8").replaceAll("50061", serverPort));
    }
    const xdskit = join(here, "node_modules", ".bin", "xdskit");
    // --strict: serve refuses a resource a gRPC client or server would NACK, and a reference to nothing.
    const serve = start(xdskit, ["serve", folder, "--strict", "--port", String(servePort)]);
    await serve.waitFor(/^serving /m);
    await server.waitFor(/^serving\n/m);

    const client = spawnSync("node", scripts.client!.split(" ").slice(1), {
      cwd: here,
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(client.stderr).toBe("");
    expect(client.stdout).toBe(
      'alice: Hello, alice!\nmallory: [permission_denied] incoming RPC matched a deny policy "deny-mallory"\n',
    );
    expect(client.status).toBe(0);
    expect(serve.stderr()).toBe("");
    // Four processes in turn, the first making RSA keys: 10.6 s in a full run on a quiet machine.
  }, 90_000);
});
