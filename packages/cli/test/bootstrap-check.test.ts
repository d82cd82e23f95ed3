// `xdskit bootstrap check [file]` on files a user writes: valid (exit 0, a summary), invalid (exit 1, one line per
// problem with its JSON path), a JSON syntax error (its line and column), a certificate file that does not exist,
// unreadable (exit 1); `--json`; the bootstrap GRPC_XDS_BOOTSTRAP or GRPC_XDS_BOOTSTRAP_CONFIG names.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestCa } from "@xdskit/test-pki";
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
        fw: {
          plugin_name: "file_watcher",
          config: { certificate_file: "ca.pem", private_key_file: "/nonexistent/k.pem" },
        },
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

  it("reports the server listener template and file_watcher providers, and material their files cannot serve", async () => {
    const ca = createTestCa();
    const leaf = ca.issue({ commonName: "server" });
    const other = ca.issue({ commonName: "other", freshKey: true });
    file("mesh-ca.pem", ca.cert);
    file("mesh-cert.pem", leaf.cert);
    file("mesh-key.pem", leaf.key);
    file("other-key.pem", other.key);
    const bootstrap = (providers: object) => ({
      xds_servers: [{ server_uri: "cp:443", channel_creds: [{ type: "insecure" }] }],
      node: { id: "n" },
      server_listener_resource_name_template: "grpc/server?xds.resource.listening_address=%s",
      certificate_providers: providers,
    });
    const good = file(
      "mesh-good.json",
      bootstrap({
        mesh: {
          plugin_name: "file_watcher",
          config: {
            certificate_file: "mesh-cert.pem",
            private_key_file: "mesh-key.pem",
            ca_certificate_file: "mesh-ca.pem",
          },
        },
      }),
    );
    const mismatched = file(
      "mesh-bad.json",
      bootstrap({
        mesh: {
          plugin_name: "file_watcher",
          config: { certificate_file: "mesh-cert.pem", private_key_file: "other-key.pem" },
        },
        roots: { plugin_name: "file_watcher", config: { ca_certificate_file: "mesh-key.pem", refresh_interval: "5s" } },
      }),
    );
    const invalid = file("mesh-invalid.json", bootstrap({ mesh: { plugin_name: "meshca" } }));
    const [ok, json, bad, unknown] = await Promise.all([
      runXdskit(["bootstrap", "check", good]),
      runXdskit(["bootstrap", "check", "--json", good]),
      runXdskit(["bootstrap", "check", mismatched]),
      runXdskit(["bootstrap", "check", invalid]),
    ]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe(
      [
        `${good}: valid`,
        "  node: n",
        "  xds_servers[0]: cp:443 (insecure)",
        "  server listener template: grpc/server?xds.resource.listening_address=%s",
        `  certificate provider mesh: file_watcher, identity ${join(dir, "mesh-cert.pem")} with key ${join(dir, "mesh-key.pem")}, roots ${join(dir, "mesh-ca.pem")}, read every 600 s`,
        "",
      ].join("\n"),
    );
    expect(JSON.parse(json.stdout)).toMatchObject({
      valid: true,
      certificate_providers: ["mesh"],
      certificate_provider_configs: {
        mesh: {
          plugin_name: "file_watcher",
          certificate_file: join(dir, "mesh-cert.pem"),
          private_key_file: join(dir, "mesh-key.pem"),
          ca_certificate_file: join(dir, "mesh-ca.pem"),
          refresh_interval_ms: 600_000,
        },
      },
      server_listener_resource_name_template: "grpc/server?xds.resource.listening_address=%s",
    });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe(
      [
        `${mismatched}: 2 problems`,
        `  certificate_providers.mesh.config: private_key_file ${join(dir, "other-key.pem")}: the private key is not the certificate's (its public key differs)`,
        `  certificate_providers.roots.config: ca_certificate_file ${join(dir, "mesh-key.pem")}: no PEM certificate in it`,
        "",
      ].join("\n"),
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toContain(
      'certificate_providers.mesh.plugin_name: unknown plugin "meshca" (supported: file_watcher)',
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
      certificate_provider_configs: {},
      server_listener_resource_name_template: null,
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
