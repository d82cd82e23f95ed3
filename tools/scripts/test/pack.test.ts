// `npm run pack`'s tarballs name each other by path (tools/scripts/pack.mjs), and the root README's "Before the first
// release" installs some of them by name: the rewrite touches only our packages, and every tarball the README names
// is one the script writes. (tools/consumer installs a subset of real ones and runs an example with them.)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { publicPackages } from "../check-pack.mjs";
import { localizeManifest, localTarballName } from "../pack.mjs";

const root = fileURLToPath(new URL("../../..", import.meta.url));

describe("npm run pack", () => {
  it("points each dependency on one of ours at its tarball in the folder, by absolute path, and leaves the rest", () => {
    const manifest = {
      name: "@xdskit/connect-xds",
      dependencies: { "@xdskit/xds-client": "^0.1.0", "@connectrpc/connect": "^2.1.2" },
      peerDependencies: { "@bufbuild/protobuf": "^2.7.0" },
    };
    const names = new Set(["@xdskit/xds-client", "@xdskit/connect-xds"]);
    expect(localizeManifest(manifest, names, "/abs/dist-packages")).toEqual({
      name: "@xdskit/connect-xds",
      dependencies: {
        "@xdskit/xds-client": "file:/abs/dist-packages/xdskit-xds-client.tgz",
        "@connectrpc/connect": "^2.1.2",
      },
      peerDependencies: { "@bufbuild/protobuf": "^2.7.0" },
    });
    expect(manifest.dependencies["@xdskit/xds-client"]).toBe("^0.1.0");
  });

  it("is the root script, and the README installs only tarballs it writes", () => {
    const scripts = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts;
    expect(scripts.pack).toBe("node tools/scripts/run.mjs pack");
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Before the first release"));
    const written = new Set(
      publicPackages().map((p: { manifest: { name: string } }) => localTarballName(p.manifest.name)),
    );
    const named = [...section.matchAll(/dist-packages\/([a-z-]+\.tgz)/g)].map((m) => m[1] ?? "");
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((name) => !written.has(name))).toEqual([]);
    expect(section).toContain("npm run pack");
  });
});
