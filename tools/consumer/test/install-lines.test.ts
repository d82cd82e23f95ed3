// Every README that says `npm install` states the Node 20 pins of Connect, at the version the workspace builds and
// tests with (pnpm-workspace.yaml's catalog); the root README's `# Node 20` command pins both packages.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CONNECT_PACKAGES, installCommands, node20ThirdParty, readmes } from "../src/install-lines.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));

/** The catalog's Connect version: the newest that declares Node 20. */
function catalogVersion(name: string): string {
  const workspace = readFileSync(join(root, "pnpm-workspace.yaml"), "utf8");
  const match = new RegExp(`^ {2}"${name}": (\\S+)$`, "m").exec(workspace);
  if (!match?.[1]) throw new Error(`no ${name} in the catalog`);
  return match[1];
}

describe("README install lines", () => {
  it("every README that says npm install gives the Node 20 pins of Connect", () => {
    const pins = CONNECT_PACKAGES.map((name) => `${name}@${catalogVersion(name)}`);
    const missing = readmes(root)
      .filter(([, text]) => text.includes("npm install"))
      .flatMap(([path, text]) => pins.filter((pin) => !text.includes(pin)).map((pin) => `${path}: ${pin}`));
    expect(missing).toEqual([]);
  });

  it("every command that pins Connect saves the pins exact (--save-exact), so a later install keeps them", () => {
    const loose = readmes(root).flatMap(([path, text]) =>
      installCommands(text)
        .filter((c) => c.args.some((arg) => /^@connectrpc\/connect(-node)?@\d/.test(arg)))
        .filter((c) => !c.args.includes("--save-exact"))
        .map((c) => `${path}: npm install ${c.args.join(" ")}`),
    );
    expect(loose).toEqual([]);
  });

  it("the root README's Node 20 command pins both Connect packages, saved exact; its Node 22 one leaves them free", () => {
    const version = catalogVersion("@connectrpc/connect");
    expect(node20ThirdParty(readFileSync(join(root, "README.md"), "utf8"))).toEqual([
      "--save-exact",
      ...CONNECT_PACKAGES.map((name) => `${name}@${version}`),
    ]);
    const node22 = installCommands(readFileSync(join(root, "README.md"), "utf8")).find((c) =>
      c.comment.startsWith("Node 22"),
    );
    expect(node22?.args.filter((arg) => arg.startsWith("@connectrpc/"))).toEqual([...CONNECT_PACKAGES]);
  });

  it("reads commands split over lines, with the comment above", () => {
    expect(installCommands("```sh\n# Node 20\nnpm install a \\\n  b@1\nnpm install c\n```")).toEqual([
      { comment: "Node 20", args: ["a", "b@1"] },
      { comment: "", args: ["c"] },
    ]);
  });
});
