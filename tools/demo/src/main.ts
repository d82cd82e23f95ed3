// `npm run demo`. Until the client and the control plane exist, it shows what the suite holds today: the packages
// and the xDS API they speak (every message generated from proto/, by package).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { allFiles } from "@xdskit/protos";

const root = fileURLToPath(new URL("../../..", import.meta.url));

function packages(): { name: string; description: string }[] {
  const dir = join(root, "packages");
  return readdirSync(dir)
    .sort()
    .map((name) => JSON.parse(readFileSync(join(dir, name, "package.json"), "utf8")))
    .map((pkg) => ({ name: `${pkg.name}@${pkg.version}`, description: pkg.description ?? "" }));
}

function messagesByPackage(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const file of allFiles) {
    let n = 0;
    const visit = (messages: typeof file.messages) => {
      for (const m of messages) {
        n += 1;
        visit(m.nestedMessages);
      }
    };
    visit(file.messages);
    counts.set(file.proto.package, (counts.get(file.proto.package) ?? 0) + n);
  }
  return counts;
}

const out: string[] = ["xdskit: a TypeScript suite for the xDS protocol family", "", "packages:"];
for (const pkg of packages()) out.push(`  ${pkg.name.padEnd(40)} ${pkg.description}`);
out.push("", "xDS API generated from proto/ (messages per protobuf package):");
for (const [pkg, count] of [...messagesByPackage()].sort(([a], [b]) => a.localeCompare(b))) {
  out.push(`  ${pkg.padEnd(56)} ${String(count).padStart(3)}`);
}
out.push("", "The live demo (control plane + client) arrives with @xdskit/control-plane and @xdskit/xds-client.");
process.stdout.write(`${out.join("\n")}\n`);
