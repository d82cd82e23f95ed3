// `xdskit bootstrap check [file]` on files a user writes: valid (exit 0, a summary), invalid (exit 1, one line per
// problem with its JSON path), a JSON syntax error (its line and column), a certificate file that does not exist,
// unreadable (exit 1); `--json`; the bootstrap GRPC_XDS_BOOTSTRAP or GRPC_XDS_BOOTSTRAP_CONFIG names.
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

  it("reports a JSON syntax error by line and column, and a file it cannot read, with exit 1", async () => {
    const [notJson, missing] = await Promise.all([
      runXdskit(["bootstrap", "check", file("broken.json", '{\n  "xds_servers": [],\n  "node": {"id": "x",}\n}')]),
      runXdskit(["bootstrap", "check", join(dir, "missing.json")]),
    ]);
    expect(notJson.code).toBe(1);
    expect(notJson.stdout).toMatch(/: 1 problem\n {2}line 3, column 22: not valid JSON: /);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^xdskit bootstrap check: cannot read .*missing\.json: ENOENT/);
  });

  it("reports certificate files that do not exist, by JSON path, relative to the bootstrap's folder", async () => {
    file("ca.pem", "not checked, only found");
    const path = file("tls.json", {
      xds_servers: [
        {
          server_uri: "cp:443",
          channel_creds: [
            {
              type: "tls",
              config: { ca_certificate_file: "ca.pem", certificate_file: "client.pem", private_key_file: "ca.pem" },
            },
          ],
        },
      ],
      node: { id: "n" },
      certificate_providers: {
        fw: { plugin_name: "file_watcher", config: { private_key_file: "/nonexistent/k.pem" } },
      },
    });
    const { code, stdout } = await runXdskit(["bootstrap", "check", path]);
    expect(code).toBe(1);
    expect(stdout).toBe(
      [
        `${path}: 2 problems`,
        `  xds_servers[0].channel_creds[0].config.certificate_file: ${join(dir, "client.pem")} does not exist`,
        "  certificate_providers.fw.config.private_key_file: /nonexistent/k.pem does not exist",
        "",
      ].join("\n"),
    );
  });

  it("--json, with the bootstrap GRPC_XDS_BOOTSTRAP names, or the JSON in GRPC_XDS_BOOTSTRAP_CONFIG", async () => {
    const good = file("env-good.json", {
      xds_servers: [{ server_uri: "cp:443", channel_creds: [{ type: "insecure" }] }],
      node: { id: "n1" },
    });
    const [fromFile, fromConfig, neither] = await Promise.all([
      runXdskit(["bootstrap", "check", "--json"], { GRPC_XDS_BOOTSTRAP: good }),
      runXdskit(["bootstrap", "check", "--json"], {
        GRPC_XDS_BOOTSTRAP: "",
        GRPC_XDS_BOOTSTRAP_CONFIG: '{"xds_servers": [], "node": {"id": 1}}',
      }),
      runXdskit(["bootstrap", "check"], { GRPC_XDS_BOOTSTRAP: "", GRPC_XDS_BOOTSTRAP_CONFIG: "" }),
    ]);
    expect(fromFile.code).toBe(0);
    expect(JSON.parse(fromFile.stdout)).toEqual({
      source: good,
      valid: true,
      problems: [],
      node: { id: "n1", cluster: "" },
      xds_servers: [{ server_uri: "cp:443", channel_creds: "insecure", api_type: "GRPC", server_features: [] }],
      authorities: {},
      certificate_providers: [],
    });
    expect(fromConfig.code).toBe(1);
    const config = JSON.parse(fromConfig.stdout);
    expect([config.source, config.valid]).toEqual(["GRPC_XDS_BOOTSTRAP_CONFIG", false]);
    expect(config.problems.map((p: { path: string }) => p.path).sort()).toEqual(["node.id", "xds_servers"]);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toMatch(
      /^xdskit bootstrap check: expected a <file>, or GRPC_XDS_BOOTSTRAP or GRPC_XDS_BOOTSTRAP_CONFIG set/,
    );
  });
});
