// The published packages as an application gets them. Steps:
//  1. Pack every public package (`packages/*` not private) with `pnpm pack` and check each tarball's contents.
//  2. Lint each tarball with publint and with attw (`--profile esm-only`), from the tarball alone.
//  3. Install the tarballs with npm into a new project under os.tmpdir() (third-party packages from the registry),
//     then `@grpc/grpc-js` and Connect as the root README's `# Node 20` command says (unpinned, npm loops on
//     ERESOLVE here); Connect resolves to the workspace's version, one copy.
//  4. Type-check, under `module: nodenext` and `strict`, a composed program, the README blocks marked
//     `ts consumer` / `ts consumer-run`, and every entry point; again without Node's types (`lib: es2022, dom`).
//  5. Run the composed program (control plane, client, CSDS), the `consumer-run` README blocks, each `bin`, and
//     the programs of `examples/` copied into the project as a user would copy them.
//  6. Install the lowest @bufbuild/protobuf of the published peer range; type-check and run the program again.
//  7. `npm run pack`'s folder (our dependencies point at sibling tarballs): a second project installs only the
//     tarballs examples/connect-greeter needs, with that README's own commands, compiles the example and runs its
//     backends, `xdskit serve` from the tarball's bin and its client.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkTarball, packAndCheck, publicPackages, repoRoot, unpackTarball } from "../../scripts/check-pack.mjs";
import { localizeTarballs } from "../../scripts/pack.mjs";
import { pruneStaleOutputs } from "../../scripts/prepack.mjs";
import { CONNECT_PACKAGES, node20ThirdParty } from "../src/install-lines.js";
import {
  copyExamples,
  createProject,
  entryPoints,
  type PackedPackage,
  run,
  THIRD_PARTY_DEPENDENCIES,
  workspaceTsc,
  writeReadmeExamples,
} from "../src/project.js";
import type { ReadmeBlock } from "../src/readme-blocks.js";
import { copyServeFolder, createSubsetProject, subsetInstallCommands } from "../src/subset-project.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const fixtures = join(here, "..", "fixtures");
const examples = join(here, "..", "..", "..", "examples");
const work = mkdtempSync(join(tmpdir(), "xdskit-consumer-"));
const project = join(work, "project");
const MINUTE = 60_000;

let packages: (PackedPackage & { problems: readonly string[] })[] = [];
let readmeExamples: ReadmeBlock[] = [];
let exampleNames: string[] = [];

const FOUR_ACKED = [
  "Listener echo.test ACKED",
  "RouteConfiguration echo-route ACKED",
  "Cluster echo ACKED",
  "ClusterLoadAssignment echo ACKED",
];

/** The type, name and status of each ACKED row of a CSDS table. */
function ackedRows(output: string): string[] {
  return output
    .split("\n")
    .filter((line) => / ACKED /.test(line))
    .map((line) => line.split(/\s+/).slice(0, 3).join(" "));
}

/** Fails with the command's whole output, so a CI log shows what went wrong. */
function expectSuccess(result: { status: number | null; output: string }): string {
  if (result.status !== 0) throw new Error(`exit ${result.status}\n${result.output}`);
  return result.output;
}

beforeAll(() => {
  packages = packAndCheck(join(work, "tarballs"));
  createProject(project, packages, fixtures);
  readmeExamples = writeReadmeExamples(project, packages);
  exampleNames = copyExamples(project, examples);
  const npmInstall = ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"];
  expectSuccess(run("npm", npmInstall, project, 8 * MINUTE));
  // What an application adds next. A loop (Connect unpinned on Node 20) ends at the timeout, failing here.
  const readmeLine = node20ThirdParty(readFileSync(join(repoRoot, "README.md"), "utf8"));
  const grpcJs = `@grpc/grpc-js@${THIRD_PARTY_DEPENDENCIES["@grpc/grpc-js"]}`;
  expectSuccess(run("npm", [...npmInstall, grpcJs, ...readmeLine], project, 3 * MINUTE));
}, 10 * MINUTE);

afterAll(() => {
  if (process.env.XDSKIT_KEEP_CONSUMER) process.stdout.write(`consumer project kept in ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
});

describe("the packed packages", () => {
  it("are every public package, each a devDependency of tools/consumer so turbo builds it first", () => {
    const names = publicPackages().map((p: { manifest: { name: string } }) => p.manifest.name);
    expect(packages.map((p) => p.name)).toEqual(names);
    const own = JSON.parse(readFileSync(join(here, "..", "package.json"), "utf8"));
    expect(names.filter((name: string) => own.devDependencies[name] !== "workspace:*")).toEqual([]);
  });

  it("hold their build, types, LICENSE, README, CHANGELOG, every exports target and resolvable source maps", () => {
    expect(packages.map((p) => [p.name, p.problems])).toEqual(packages.map((p) => [p.name, []]));
  });

  it("declare the Node versions xds-client needs (its lazy modules use require() of ES modules), all alike", () => {
    const wanted = packages.find((p) => p.name === "@xdskit/xds-client")?.manifest.engines?.node;
    expect(wanted).toMatch(/^\^20\.19\.0 \|\| >=22\.12\.0$/);
    expect(packages.map((p) => [p.name, p.manifest.engines?.node])).toEqual(packages.map((p) => [p.name, wanted]));
  });

  it("check-pack rejects a tarball without LICENSE, types or an exports target", () => {
    const good = packages.find((p) => p.name === "@xdskit/csds");
    if (!good) throw new Error("no @xdskit/csds tarball");
    const { root } = unpackTarball(good.tarball);
    rmSync(join(root, "LICENSE"));
    rmSync(join(root, "dist", "index.d.ts"));
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    manifest.exports["./extra"] = "./dist/extra.js";
    manifest.dependencies["@xdskit/protos"] = "workspace:^";
    writeFileSync(join(root, "package.json"), JSON.stringify(manifest));
    const broken = join(work, "broken.tgz");
    expectSuccess(run("tar", ["-czf", broken, "-C", join(root, ".."), "package"], work, MINUTE));
    rmSync(dirname(root), { recursive: true, force: true });
    expect(checkTarball(broken).problems).toEqual([
      "LICENSE is missing",
      "dist/index.d.ts is missing",
      "exports target ./dist/index.d.ts is not in the tarball",
      "exports target ./dist/extra.js is not in the tarball",
      'dependencies.@xdskit/protos is still "workspace:^"',
    ]);
  });

  it("prepack removes the outputs of deleted source files and leaves the others in place", () => {
    const dir = mkdtempSync(join(tmpdir(), "xdskit-prepack-"));
    try {
      const files = {
        "src/kept.ts": "",
        "src/deep/kept.ts": "",
        "dist/kept.js": "",
        "dist/kept.d.ts.map": "",
        "dist/deep/kept.d.ts": "",
        "dist/gone.js": "",
        "dist/gone.js.map": "",
        "dist/deep/gone.d.ts": "",
        "dist/notes.txt": "",
      };
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      }
      const removed = pruneStaleOutputs(join(dir, "dist"), join(dir, "src"));
      expect(removed.map((path: string) => relative(dir, path)).sort()).toEqual([
        "dist/deep/gone.d.ts",
        "dist/gone.js",
        "dist/gone.js.map",
      ]);
      for (const path of ["dist/kept.js", "dist/kept.d.ts.map", "dist/deep/kept.d.ts", "dist/notes.txt"]) {
        expect(existsSync(join(dir, path))).toBe(true);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("pass publint (no errors, warnings or suggestions)", async () => {
    const findings: string[] = [];
    for (const pkg of packages) {
      const tarball = readFileSync(pkg.tarball);
      const result = await publint({
        pack: { tarball: tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.byteLength) },
      });
      for (const message of result.messages) {
        findings.push(`${pkg.name}: ${message.type}: ${formatMessage(message, result.pkg, { color: false })}`);
      }
    }
    expect(findings).toEqual([]);
  });

  it("pass attw --profile esm-only, every entry point included", () => {
    const attw = join(here, "..", "node_modules", ".bin", "attw");
    const failures: string[] = [];
    for (const pkg of packages) {
      const subpaths = entryPoints(pkg).map((s) => `.${s.slice(pkg.name.length)}`);
      const args = [pkg.tarball, "--profile", "esm-only", "--no-definitely-typed", "--format", "ascii"];
      const result = run(attw, [...args, "--no-color", "--include-entrypoints", ...subpaths], work, 2 * MINUTE);
      if (result.status !== 0) failures.push(result.output);
    }
    expect(failures).toEqual([]);
  });
});

describe("a project that installs them with npm", () => {
  it("gets one copy of Connect, at the version the workspace uses on Node 20, through the README's install line", () => {
    const workspace = readFileSync(join(repoRoot, "pnpm-workspace.yaml"), "utf8");
    for (const name of CONNECT_PACKAGES) {
      const expected = new RegExp(`^ {2}"${name}": (\\S+)$`, "m").exec(workspace)?.[1];
      const installed = JSON.parse(readFileSync(join(project, "node_modules", name, "package.json"), "utf8"));
      expect([name, installed.version]).toEqual([name, expected]);
    }
    const nested = packages.flatMap((p) =>
      CONNECT_PACKAGES.filter((name) => existsSync(join(project, "node_modules", p.name, "node_modules", name))),
    );
    expect(nested).toEqual([]);
    // --save-exact: the pins stay pins for the next install that resolves again.
    const saved = JSON.parse(readFileSync(join(project, "package.json"), "utf8")).dependencies;
    expect(CONNECT_PACKAGES.map((name) => saved[name])).toEqual(
      CONNECT_PACKAGES.map((name) => new RegExp(`^ {2}"${name}": (\\S+)$`, "m").exec(workspace)?.[1]),
    );
  });

  it("type-checks the composed program, the README examples and every entry point (nodenext, strict)", () => {
    expectSuccess(run("node", [workspaceTsc(), "-p", "tsconfig.json"], project, 3 * MINUTE));
  });

  it("type-checks every entry point without Node's types, but those of optional Node-only peers (lib es2022 + dom, skipLibCheck off)", () => {
    expectSuccess(run("node", [workspaceTsc(), "-p", "tsconfig.types-only.json"], project, 3 * MINUTE));
  });

  it("runs the composed program: control plane -> client (LDS, RDS, CDS, EDS) -> CSDS over HTTP/2", () => {
    const output = expectSuccess(run("node", ["dist/compose.js"], project, MINUTE));
    expect(output).toContain("listener echo.test -> route echo-route");
    expect(output).toContain("route echo-route -> echo:3,echo-canary:1 of 4");
    expect(output).toContain("cluster echo -> endpoints 127.0.0.1:50051");
    expect(output).toContain("csds scope xds:///echo.test node consumer");
    expect(ackedRows(output)).toEqual(FOUR_ACKED);
  });

  it("runs the README blocks marked consumer-run", () => {
    const failures = readmeExamples
      .filter((block) => block.run)
      .map((block) => run("node", [`dist/readme/${block.id}.js`], project, 2 * MINUTE))
      .filter((result) => result.status !== 0)
      .map((result) => result.output);
    expect(failures).toEqual([]);
  });

  it("runs examples/composed-client copied into the project: the canary endpoints DPDS chose, CSDS rows", () => {
    expect(exampleNames).toContain("composed-client");
    const output = expectSuccess(run("node", ["dist/examples/composed-client/main.js"], project, MINUTE));
    expect(output).toContain("cluster echo -> endpoints echo-canary");
    expect(output).toContain("endpoints 127.0.0.1:50052");
    expect(ackedRows(output)).toEqual([
      "DynamicParameterConstraintsMap dynamic-parameters ACKED",
      "Listener echo.test ACKED",
      "RouteConfiguration echo-route ACKED",
      "Cluster echo{track=canary} ACKED",
      "ClusterLoadAssignment echo-canary ACKED",
    ]);
  });

  it("lets tools read each package's package.json (exports has ./package.json)", () => {
    const require = createRequire(join(project, "package.json"));
    const versions = packages.map((p) => [p.name, require(`${p.name}/package.json`).name]);
    expect(versions).toEqual(packages.map((p) => [p.name, p.name]));
  });

  it("runs each package's bin with --help", () => {
    const bins = packages.flatMap((p) =>
      typeof p.manifest.bin === "string" ? [p.name.split("/").at(-1) ?? ""] : Object.keys(p.manifest.bin ?? {}),
    );
    for (const bin of bins) {
      const output = expectSuccess(run(join(project, "node_modules", ".bin", bin), ["--help"], project, MINUTE));
      expect(output).toContain(`Usage: ${bin}`);
    }
  });

  // Last: it changes the project's node_modules.
  it("works with the lowest @bufbuild/protobuf of the published peer range", () => {
    const ranges = new Set(packages.map((p) => p.manifest.peerDependencies?.["@bufbuild/protobuf"]).filter(Boolean));
    expect(ranges.size).toBe(1);
    const [range = ""] = ranges;
    expect(range).toMatch(/^\^\d+\.\d+\.\d+$/);
    const lowest = range.slice(1);
    const install = ["install", "--no-save", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"];
    expectSuccess(run("npm", [...install, `@bufbuild/protobuf@${lowest}`], project, 5 * MINUTE));
    const installed = JSON.parse(readFileSync(join(project, "node_modules/@bufbuild/protobuf/package.json"), "utf8"));
    expect(installed.version).toBe(lowest);
    expectSuccess(run("node", [workspaceTsc(), "-p", "tsconfig.json"], project, 3 * MINUTE));
    expectSuccess(run("node", [workspaceTsc(), "-p", "tsconfig.types-only.json"], project, 3 * MINUTE));
    expect(ackedRows(expectSuccess(run("node", ["dist/compose.js"], project, MINUTE)))).toEqual(FOUR_ACKED);
  });
});

/** A long-running command of the subset project; `waitFor` resolves with its stdout once it matches. */
function startIn(cwd: string, command: string, args: readonly string[]) {
  const child: ChildProcess = spawn(command, args, { cwd, stdio: "pipe" });
  running.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const waitFor = (pattern: RegExp, timeoutMs = 30_000) =>
    new Promise<string>((resolve, reject) => {
      const started = Date.now();
      const timer = setInterval(() => {
        if (pattern.test(stdout)) {
          clearInterval(timer);
          resolve(stdout);
        } else if (child.exitCode !== null || Date.now() - started > timeoutMs) {
          clearInterval(timer);
          reject(
            new Error(`${command} ${args.join(" ")}: no ${pattern} (exit ${child.exitCode}):\n${stdout}\n${stderr}`),
          );
        }
      }, 20);
    });
  return { child, waitFor, stderr: () => stderr };
}

const running: ChildProcess[] = [];
afterAll(() => {
  for (const child of running) child.kill("SIGKILL");
});

describe("a project that installs only the tarballs examples/connect-greeter needs, from npm run pack's folder", () => {
  const app = join(work, "greeter-app");
  const example = join(examples, "connect-greeter");

  it("installs them with the example README's commands, nothing else of ours named, and gets the xdskit packages they need", () => {
    const folder = join(work, "dist-packages");
    localizeTarballs(packages, folder);
    const commands = subsetInstallCommands(readFileSync(join(example, "README.md"), "utf8"), folder);
    expect(commands.map((args) => args.map((arg) => arg.replace(folder, "<pack>")))).toEqual([
      [
        "<pack>/xdskit-connect-xds.tgz",
        "<pack>/xdskit-orca-lrs-bridge.tgz",
        "<pack>/xdskit-cli.tgz",
        "@bufbuild/protobuf",
      ],
      ["--save-dev", "typescript", "@types/node@20"],
      ["--save-exact", "@connectrpc/connect@2.1.2", "@connectrpc/connect-node@2.1.2"],
    ]);
    createSubsetProject(app, example);
    const npmInstall = ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"];
    for (const args of commands) expectSuccess(run("npm", [...npmInstall, ...args], app, 5 * MINUTE));
    // The tarballs' dependencies on our other packages resolved to the sibling tarballs (no registry has them).
    const installed = readdirSync(join(app, "node_modules", "@xdskit")).sort();
    expect(installed).toEqual([
      "cli",
      "connect-xds",
      "constraint-matcher",
      "control-plane",
      "csds",
      "etcd-source",
      "orca-lrs-bridge",
      "protos",
      "xds-client",
      "xds-relay",
    ]);
  });

  it("compiles the example there and runs it: backends, xdskit serve from the tarball, the client through xds:///greeter", async () => {
    // Built with the TypeScript the README had the project install.
    expectSuccess(
      run("node", [join(app, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], app, 3 * MINUTE),
    );
    const backends = startIn(app, "node", ["dist/backends.js", "--ports", "0,0,0"]);
    const ports = [...(await backends.waitFor(/serving; Ctrl-C/)).matchAll(/127\.0\.0\.1:(\d+)/g)].map((m) => m[1]!);
    copyServeFolder(example, join(app, "serve"), ports);
    const serve = startIn(app, join(app, "node_modules", ".bin", "xdskit"), [
      "serve",
      "serve",
      "--loads",
      "--port",
      "0",
    ]);
    const address = /on (127\.0\.0\.1:\d+) /.exec(await serve.waitFor(/^serving /m))?.[1] ?? "";
    const client = expectSuccess(run("node", ["dist/main.js", "--xds", address, "--calls", "20"], app, MINUTE));
    expect(client).toContain("20 calls through xds:///greeter, 0 failed; answered by:");
    await serve.waitFor(/loads from node greeter-client:/);
    expect(serve.stderr()).toBe("");
    backends.child.kill("SIGINT");
    serve.child.kill("SIGINT");
    await Promise.all([backends.waitFor(/stopped; calls served: /), serve.waitFor(/stopped\n/)]);
  });
});
