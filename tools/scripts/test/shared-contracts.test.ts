// The small utilities kept as a copy per package (docs/decisions.md#shared-utilities): what users hand to several
// packages (a Logger, a Clock) must be declared alike in each, so one object serves them all. Compared as
// TypeScript declarations with comments and formatting left out: the wording of a comment may fit its package.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const packages = fileURLToPath(new URL("../../../packages", import.meta.url));
const printer = ts.createPrinter({ removeComments: true });

/** The declaration of `name` in `packages/<path>`, printed without comments; undefined when it has none. */
function declaration(path: string, name: string): string | undefined {
  const text = readFileSync(join(packages, path), "utf8");
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  for (const statement of file.statements) {
    const names = ts.isVariableStatement(statement)
      ? statement.declarationList.declarations.map((d) => d.name.getText(file))
      : [(statement as ts.DeclarationStatement).name?.getText(file)];
    if (names.includes(name)) return printer.printNode(ts.EmitHint.Unspecified, statement, file);
  }
  return undefined;
}

const CONTRACTS: readonly { readonly names: readonly string[]; readonly files: readonly string[] }[] = [
  {
    names: ["LogLevel", "Logger", "noopLogger"],
    files: ["xds-client/src/observability/logger.ts", "control-plane/src/logger.ts", "orca-lrs-bridge/src/logger.ts"],
  },
  { names: ["Clock"], files: ["xds-client/src/shared/clock.ts", "orca-lrs-bridge/src/clock.ts"] },
  { names: ["prefixed"], files: ["etcd-source/src/logger.ts", "xds-relay/src/logger.ts"] },
];

describe("contracts declared in several packages", () => {
  for (const { names, files } of CONTRACTS) {
    it.each(names)(`%s is declared alike in ${files.join(", ")}`, (name) => {
      const [first, ...rest] = files.map((file) => declaration(file, name));
      expect(first, `${files[0]} declares ${name}`).toBeDefined();
      rest.forEach((other, i) => {
        expect(other, files[i + 1]).toBe(first);
      });
    });
  }
});
