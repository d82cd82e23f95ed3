// `xdskit bootstrap check <file>` on files a user writes: valid (exit 0, a summary), invalid (exit 1, one line per
// problem with its JSON path), unreadable (exit 1).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { killAll, runXdskit } from "./support/xdskit.js";

const dir = mkdtempSync(join(tmpdir(), "xdskit-bootstrap-"));
afterAll(() => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

describe("xdskit bootstrap check", () => {
  it("summarises a valid bootstrap and exits 0", async () => {
    const path = file("good.json", {
      xds_servers: [
        { server_uri: "cp.example:443", channel_creds: [{ type: "insecure" }], server_features: ["xds_v3"] },
        { server_uri: "backup:18000", channel_creds: [{ type: "insecure" }], api_type: "DELTA_GRPC" },
      ],
      node: { id: "node-1", cluster: "c" },
      authorities: { "example.com": {} },
    });
    const { code, stdout } = await runXdskit(["bootstrap", "check", path]);
    expect(code).toBe(0);
    expect(stdout).toBe(
      [
        `${path}: valid`,
        "  node: node-1, cluster c",
        "  xds_servers[0]: cp.example:443 (insecure) [xds_v3]",
        "  xds_servers[1]: backup:18000 (insecure, delta)",
        "  authority example.com: the top-level xds_servers",
        "",
      ].join("\n"),
    );
  });

  it("lists every problem with its JSON path and exits 1", async () => {
    const path = file("bad.json", {
      xds_servers: [{ channel_creds: [{ type: "insecure" }] }],
      node: { id: 5 },
      authorities: { a: { client_listener_resource_name_template: "xdstp://b/x/%s" } },
    });
    const { code, stdout } = await runXdskit(["bootstrap", "check", path]);
    expect(code).toBe(1);
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(`${path}: 3 problems`);
    expect(lines.slice(1).map((line) => line.slice(0, line.indexOf(": ")))).toEqual([
      "  xds_servers[0].server_uri",
      "  node.id",
      "  authorities.a.client_listener_resource_name_template",
    ]);
  });

  it("reports text that is not JSON, and a file it cannot read, with exit 1", async () => {
    const notJson = await runXdskit(["bootstrap", "check", file("broken.json", "{")]);
    expect(notJson.code).toBe(1);
    expect(notJson.stdout).toMatch(/: 1 problem\n {2}\$: not valid JSON/);
    const missing = await runXdskit(["bootstrap", "check", join(dir, "missing.json")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^xdskit bootstrap check: cannot read .*missing\.json: ENOENT/);
  });
});
