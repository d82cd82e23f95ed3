// The example as its README runs it, on 127.0.0.1: `npm run backends`, `npm run serve`, `npm run client`, each the
// package.json script the README names, with free ports instead of the fixed 50051-50053 and 18000 (so the test
// runs beside anything else): the backends on ports 0, serve/ copied with their ports into a temporary folder.
// Checks that every call is answered, split by the route's weights, and that `xdskit serve --loads` prints the
// load the client reported, with each backend's ORCA CPU utilization.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const here = fileURLToPath(new URL("..", import.meta.url));
const scripts: Record<string, string> = JSON.parse(readFileSync(join(here, "package.json"), "utf8")).scripts;
const work = mkdtempSync(join(tmpdir(), "xdskit-greeter-"));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

/** Starts a command of the example; resolves once its stdout matches `ready`, with everything it printed. */
function start(command: string, args: readonly string[], ready: RegExp) {
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
      const check = () => {
        if (pattern.test(stdout)) {
          clearInterval(timer);
          resolve(stdout);
        } else if (child.exitCode !== null) {
          clearInterval(timer);
          reject(new Error(`${command} ${args.join(" ")} exited ${child.exitCode}:\n${stdout}\n${stderr}`));
        }
      };
      const timer = setInterval(check, 20);
    });
  return { child, ready: waitFor(ready), waitFor, stderr: () => stderr };
}

/** The shell commands of the README's first `sh` block. */
function readmeCommands(): string[] {
  const readme = readFileSync(join(here, "README.md"), "utf8");
  const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  return block
    .split("\n")
    .map((line) => line.replace(/#.*$/, "").trim())
    .filter((line) => line !== "");
}

describe("examples/connect-greeter", () => {
  it("the README's commands are the package's scripts, from a fresh clone: setup first, then backends, serve, client", () => {
    expect(readmeCommands()).toEqual([
      "cd examples/connect-greeter",
      "npm run setup",
      "npm run backends",
      "npm run serve",
      "npm run client",
    ]);
    expect(scripts.setup).toBe("node ../../tools/scripts/run.mjs setup @xdskit/example-connect-greeter");
    expect(scripts.backends).toBe("node dist/backends.js");
    expect(scripts.serve).toBe("xdskit serve serve --loads");
    expect(scripts.client).toBe("node dist/main.js");
  });

  it("serve/ passes xdskit serve's checks: what a gRPC client accepts, every reference served", async () => {
    const xdskit = join(here, "node_modules", ".bin", "xdskit");
    // --strict refuses to start on a resource a client would NACK or a reference to nothing.
    const strict = start(xdskit, ["serve", "serve", "--strict", "--port", "0"], /^serving /);
    await strict.ready;
    expect(strict.stderr()).toBe("");
    strict.child.kill("SIGINT");
    await strict.waitFor(/stopped\n/);
  });

  it("backends, xdskit serve and the client: every call answered, split 80/20 by the route, loads printed", async () => {
    const backendArgs = [...scripts.backends!.split(" ").slice(1), "--ports", "0,0,0"];
    const backends = start("node", backendArgs, /serving; Ctrl-C to stop\n/);
    const listing = await backends.ready;
    const ports = [...listing.matchAll(/^greeter-[abc] on 127\.0\.0\.1:(\d+)/gm)].map((m) => m[1]!);
    expect(ports).toHaveLength(3);

    const folder = join(work, "serve");
    cpSync(join(here, "serve"), folder, { recursive: true });
    const endpoints = join(folder, "endpoints.yaml");
    let yaml = readFileSync(endpoints, "utf8");
    ["50051", "50052", "50053"].forEach((fixed, i) => {
      yaml = yaml.replace(`portValue: ${fixed}`, `portValue: ${ports[i]}`);
    });
    writeFileSync(endpoints, yaml);
    expect(readdirSync(folder).sort()).toEqual(["clusters.yaml", "endpoints.yaml", "listener.yaml", "routes.yaml"]);

    const [command, ...serveArgs] = scripts.serve!.split(" ");
    const xdskit = join(here, "node_modules", ".bin", command!);
    // `xdskit serve <folder> ...`: the folder is the second word.
    expect(serveArgs[1]).toBe("serve");
    const args = serveArgs.map((arg, i) => (i === 1 ? folder : arg));
    const serve = start(xdskit, [...args, "--port", "0"], /^serving .* on 127\.0\.0\.1:\d+ /m);
    const address = /on (127\.0\.0\.1:\d+) /.exec(await serve.ready)?.[1] ?? "";

    const calls = 200;
    const client = spawnSync(
      "node",
      [...scripts.client!.split(" ").slice(1), "--xds", address, "--calls", String(calls)],
      { cwd: here, encoding: "utf8", timeout: 30_000 },
    );
    expect(client.stderr).toBe("");
    expect(client.status).toBe(0);
    expect(client.stdout).toMatch(/^Hello, mesh! \(from greeter-[abc], zone [abc]\)\n/);
    expect(client.stdout).toContain(`${calls} calls through xds:///greeter, 0 failed; answered by:\n`);
    const count = (backend: string) =>
      Number(new RegExp(`^ {2}${backend} \\(zone .\\) +(\\d+) `, "m").exec(client.stdout)?.[1] ?? 0);
    const [a, b, c] = [count("greeter-a"), count("greeter-b"), count("greeter-c")];
    expect(a + b + c).toBe(calls);
    // 20 % of 200 is 40 for greeter-canary (backend c); 15 to 70 is more than four standard deviations either way.
    expect(c).toBeGreaterThanOrEqual(15);
    expect(c).toBeLessThanOrEqual(70);
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);

    // Closing the transport sent the calls it counted to serve's LRS sink: one row per cluster and zone.
    const table = await serve.waitFor(/greeter-canary +c +\d+/);
    expect(table).toMatch(
      new RegExp(`greeter-client +greeter +a +${a} +${a} +0 +0 +cpu_utilization +0\\.300 +${a}\\n`),
    );
    expect(table).toMatch(new RegExp(` +greeter +b +${b} +${b} +0 +0 +cpu_utilization +0\\.600 +${b}\\n`));
    expect(table).toMatch(new RegExp(` +greeter-canary +c +${c} +${c} +0 +0 +cpu_utilization +0\\.200 +${c}\\n`));
    expect(serve.stderr()).toBe("");

    backends.child.kill("SIGINT");
    serve.child.kill("SIGINT");
    expect(await backends.waitFor(/stopped; calls served: /)).toContain(
      `stopped; calls served: greeter-a ${a}, greeter-b ${b}, greeter-c ${c}`,
    );
    await serve.waitFor(/stopped\n/);
  });
});
