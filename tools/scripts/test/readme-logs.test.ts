// Each package that takes a Logger says in its README how to see why a call failed: a Logs section that names
// XDSKIT_LOG and links docs/logging.md, which lists every component.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const COMPONENTS = [
  "xds-client",
  "connect-xds",
  "control-plane",
  "orca-lrs-bridge",
  "xds-relay",
  "dpds-wrapper",
  "etcd-source",
  "cli",
];

describe("the READMEs on logs", () => {
  it("every package that takes a Logger has a Logs section naming XDSKIT_LOG and linking docs/logging.md", () => {
    const missing = COMPONENTS.filter((name) => {
      const readme = readFileSync(join(root, "packages", name, "README.md"), "utf8");
      const section = /^## Logs[^\n]*\n([\s\S]*?)(?=^## |$(?![\s\S]))/m.exec(readme)?.[1] ?? "";
      return !(section.includes("XDSKIT_LOG") && section.includes("(../../docs/logging.md)"));
    });
    expect(missing).toEqual([]);
  });

  it("docs/logging.md names every component, as log-environment.ts knows them", () => {
    const doc = readFileSync(join(root, "docs", "logging.md"), "utf8");
    const source = readFileSync(
      join(root, "packages", "xds-client", "src", "observability", "log-environment.ts"),
      "utf8",
    );
    const known = /LOG_COMPONENTS = \[([^\]]*)\]/
      .exec(source)?.[1]
      ?.match(/"[a-z-]+"/g)
      ?.map((n) => n.slice(1, -1));
    expect(known).toEqual(COMPONENTS);
    expect(COMPONENTS.filter((name) => !doc.includes(`\`${name}\``))).toEqual([]);
  });
});
