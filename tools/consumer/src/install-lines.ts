// The `npm install` lines of the READMEs. On Node 20 the Connect packages must be pinned to their last release for
// Node 20 (the root README's Installing says why): every README that says `npm install` gives those pins, and
// tools/consumer runs the root README's `# Node 20` command as an application would.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const CONNECT_PACKAGES = ["@connectrpc/connect", "@connectrpc/connect-node"] as const;

export interface InstallCommand {
  /** The `#` comment line right above the command, without `#` ("" when none). */
  readonly comment: string;
  /** What follows `npm install`, continuation lines (`\`) joined. */
  readonly args: readonly string[];
}

/** Every line of a markdown text that starts with `npm install` (in a shell block), with the comment above it. */
export function installCommands(markdown: string): InstallCommand[] {
  const lines = markdown.split(/\r?\n/).map((line) => line.trim());
  const commands: InstallCommand[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith("npm install ")) continue;
    const above = lines[i - 1] ?? "";
    let text = lines[i]!;
    while (text.endsWith("\\") && i + 1 < lines.length) text = `${text.slice(0, -1)} ${lines[++i]}`;
    commands.push({
      comment: above.startsWith("#") ? above.replace(/^#+\s*/, "") : "",
      args: text.split(/\s+/).slice(2),
    });
  }
  return commands;
}

/** The root README, every package's and every example's: `[path relative to root, text]`. */
export function readmes(root: string): [string, string][] {
  const found: [string, string][] = [["README.md", readFileSync(join(root, "README.md"), "utf8")]];
  for (const group of ["packages", "examples"]) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name, "README.md");
      if (existsSync(path)) found.push([`${group}/${name}/README.md`, readFileSync(path, "utf8")]);
    }
  }
  return found;
}

/** The third-party packages of the root README's `# Node 20` command (ours come from the tarballs). */
export function node20ThirdParty(rootReadme: string): string[] {
  const command = installCommands(rootReadme).find((c) => /^Node 20\b/.test(c.comment));
  if (!command) throw new Error('the root README has no "# Node 20" npm install command');
  return command.args.filter((arg) => !arg.startsWith("@xdskit/"));
}
