// A second consumer project: only the tarballs examples/connect-greeter needs, from the folder `npm run pack`
// writes (tools/scripts/pack.mjs: our dependencies point at sibling tarballs), installed with the example README's
// own commands, and the example's sources compiled and run there: backends, `xdskit serve` from the tarball's bin,
// the client.
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { installCommands } from "./install-lines.js";

/** Where the example's README says the pack folder is, seen from the user's project. */
export const README_PACK_FOLDER = "../xdskit/dist-packages/";

/**
 * The `npm install` commands of the example README's "Copying it out" block that an application on Node 20 runs:
 * the tarballs (as paths in `folder`) and the Connect pins. The `# Node 22` line is left out (this is Node 20).
 */
export function subsetInstallCommands(readme: string, folder: string): string[][] {
  const commands = installCommands(readme).filter((c) => !c.comment.startsWith("Node 22"));
  return commands.map((c) =>
    c.args.map((arg) =>
      arg.startsWith(README_PACK_FOLDER) ? join(folder, arg.slice(README_PACK_FOLDER.length)) : arg,
    ),
  );
}

/** The project: package.json, the example's tsconfig, its `src/`; npm install is the caller's next step. */
export function createSubsetProject(project: string, example: string): void {
  mkdirSync(project, { recursive: true });
  writeFileSync(
    join(project, "package.json"),
    `${JSON.stringify({ name: "greeter-app", private: true, type: "module" }, null, 2)}\n`,
  );
  cpSync(join(example, "src"), join(project, "src"), { recursive: true });
  cpSync(join(example, "tsconfig.json"), join(project, "tsconfig.json"));
}

/** serve/ of the example, copied into `target` with the backends' real ports in place of 50051-50053. */
export function copyServeFolder(example: string, target: string, ports: readonly string[]): void {
  cpSync(join(example, "serve"), target, { recursive: true });
  const endpoints = join(target, "endpoints.yaml");
  let yaml = readFileSync(endpoints, "utf8");
  ["50051", "50052", "50053"].forEach((fixed, i) => {
    yaml = yaml.replace(`portValue: ${fixed}`, `portValue: ${ports[i]}`);
  });
  writeFileSync(endpoints, yaml);
}
