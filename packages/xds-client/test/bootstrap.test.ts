import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BootstrapError, createXdsClient, parseBootstrap } from "../src/index.js";

const minimal = { xds_servers: [{ server_uri: "cp:443", channel_creds: [{ type: "insecure" }] }], node: { id: "n" } };

function problems(json: unknown): string[] {
  try {
    parseBootstrap(json);
  } catch (error) {
    expect(error).toBeInstanceOf(BootstrapError);
    return [...(error as BootstrapError).problems];
  }
  throw new Error("expected a BootstrapError");
}

describe("bootstrap", () => {
  it("reads servers, features, node, authorities, templates and dynamic parameters", () => {
    const b = parseBootstrap({
      xds_servers: [
        {
          server_uri: "dns:///cp:443",
          channel_creds: [{ type: "google_default" }, { type: "insecure" }],
          server_features: ["fail_on_data_errors", "resource_timer_is_transient_error", "trusted_xds_server", "xds_v3"],
          api_type: "DELTA_GRPC",
        },
      ],
      node: { id: "n1", cluster: "c", locality: { zone: "z1" }, metadata: { team: "x" } },
      authorities: { "a.example": { dynamic_parameters: { env: "prod" } } },
      dynamic_parameters: { region: "eu" },
      client_default_listener_resource_name_template: "xdstp://a.example/envoy.config.listener.v3.Listener/%s",
    });
    const server = b.xdsServers[0]!;
    expect(server.channelCredentials).toEqual({ type: "insecure" });
    expect([
      server.failOnDataErrors,
      server.resourceTimerIsTransientError,
      server.trustedXdsServer,
      server.ignoreResourceDeletion,
    ]).toEqual([true, true, true, false]);
    expect(server.apiType).toBe("DELTA_GRPC");
    expect(b.node).toMatchObject({
      id: "n1",
      cluster: "c",
      locality: { region: "", zone: "z1", subZone: "" },
      metadata: { team: "x" },
    });
    expect(b.authorities.get("a.example")).toMatchObject({
      clientListenerResourceNameTemplate: "xdstp://a.example/envoy.config.listener.v3.Listener/%s",
      dynamicParameters: { env: "prod" },
    });
    expect(b.authorities.get("a.example")?.xdsServers).toBeUndefined();
    expect(b.dynamicParameters).toEqual({ region: "eu" });
    expect(Object.isFrozen(b)).toBe(true);
  });

  it("dedupes channels by URI, credentials and known features only", () => {
    const a = parseBootstrap({
      ...minimal,
      xds_servers: [{ ...minimal.xds_servers[0], server_features: ["xds_v3", "fail_on_data_errors"] }],
    });
    const b = parseBootstrap({
      ...minimal,
      xds_servers: [{ ...minimal.xds_servers[0], server_features: ["fail_on_data_errors"] }],
    });
    const c = parseBootstrap({ ...minimal, xds_servers: [{ ...minimal.xds_servers[0], server_features: [] }] });
    expect(a.xdsServers[0]?.key).toBe(b.xdsServers[0]?.key);
    expect(a.xdsServers[0]?.key).not.toBe(c.xdsServers[0]?.key);
  });

  it("names every bad field by its JSON path, all at once", () => {
    expect(
      problems({
        xds_servers: [{ server_uri: 7, channel_creds: [{ type: "alts" }] }, "x"],
        node: { id: 3 },
        authorities: { "a.example": { client_listener_resource_name_template: "xdstp://b.example/x/%s" } },
        dynamic_parameters: { k: 1 },
      }),
    ).toEqual([
      "xds_servers[0].server_uri: expected a string, got number 7",
      "xds_servers[0].channel_creds: no supported channel credentials (supported: insecure, tls)",
      'xds_servers[1]: expected an object, got string "x"',
      "node.id: expected a string, got number 3",
      "dynamic_parameters.k: expected a string, got number 1",
      'authorities.a.example.client_listener_resource_name_template: must start with "xdstp://a.example/"',
    ]);
    expect(problems({ node: { id: "n" } })).toEqual(["xds_servers: is required"]);
    expect(problems({ xds_servers: [] })).toEqual(["xds_servers: must hold at least one server"]);
    expect(
      problems({
        ...minimal,
        xds_servers: [{ server_uri: "x", channel_creds: [{ type: "insecure" }], api_type: "REST" }],
      }),
    ).toEqual(['xds_servers[0].api_type: must be "GRPC" or "DELTA_GRPC", got "REST"']);
  });

  it("comes from the option, then GRPC_XDS_BOOTSTRAP, then GRPC_XDS_BOOTSTRAP_CONFIG, and names a bad source", async () => {
    const dir = mkdtempSync(join(tmpdir(), "xdskit-bootstrap-"));
    try {
      const file = join(dir, "bootstrap.json");
      writeFileSync(file, JSON.stringify({ ...minimal, node: { id: "from-file" } }));
      const inline = JSON.stringify({ ...minimal, node: { id: "from-env" } });
      const fromFile = createXdsClient({ env: { GRPC_XDS_BOOTSTRAP: file, GRPC_XDS_BOOTSTRAP_CONFIG: inline } });
      expect(fromFile.bootstrap.node.id).toBe("from-file");
      const fromEnv = createXdsClient({ env: { GRPC_XDS_BOOTSTRAP_CONFIG: inline } });
      expect(fromEnv.bootstrap.node.id).toBe("from-env");
      const fromOption = createXdsClient({
        bootstrap: JSON.stringify(minimal),
        env: { GRPC_XDS_BOOTSTRAP_CONFIG: inline },
      });
      expect(fromOption.bootstrap.node.id).toBe("n");
      await Promise.all([fromFile.close(), fromEnv.close(), fromOption.close()]);
      expect(() => createXdsClient({ env: {} })).toThrow(/no bootstrap/);
      expect(() => createXdsClient({ env: { GRPC_XDS_BOOTSTRAP: join(dir, "missing.json") } })).toThrow(
        /GRPC_XDS_BOOTSTRAP: cannot read/,
      );
      expect(() => createXdsClient({ bootstrap: "{not json" })).toThrow(/\$: not valid JSON/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("ignores authorities and templates with federation off, and dynamic parameters with A67 off", async () => {
    const client = createXdsClient({
      bootstrap: { ...minimal, authorities: { a: {} }, dynamic_parameters: { k: "v" } },
      env: { GRPC_EXPERIMENTAL_XDS_FEDERATION: "false", GRPC_EXPERIMENTAL_XDS_DYNAMIC_PARAMETERS: "false" },
    });
    expect(client.features.federation).toBe(false);
    expect(client.bootstrap.authorities.size).toBe(0);
    expect(client.bootstrap.dynamicParameters).toEqual({});
    const forced = createXdsClient({
      bootstrap: minimal,
      env: { GRPC_EXPERIMENTAL_XDS_FEDERATION: "false" },
      features: { federation: true },
    });
    expect(forced.features.federation).toBe(true);
    await Promise.all([client.close(), forced.close()]);
  });
});
