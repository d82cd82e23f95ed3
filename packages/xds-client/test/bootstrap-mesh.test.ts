// The bootstrap's mesh fields: `certificate_providers` with the file_watcher plugin (A29) and
// `server_listener_resource_name_template` (A36, A47), with the Listener name a server watches.
import { describe, expect, it } from "vitest";
import { parseJsonDurationMs } from "../src/bootstrap/bootstrap-certificate-providers.js";
import {
  BootstrapError,
  expandServerListenerTemplate,
  formatListeningAddress,
  listenerAddressMatches,
  parseBootstrap,
  serverListenerResourceName,
} from "../src/index.js";

const minimal = { xds_servers: [{ server_uri: "cp:443", channel_creds: [{ type: "insecure" }] }], node: { id: "n" } };

function problems(json: unknown, baseDir?: string): string[] {
  try {
    parseBootstrap(json, baseDir === undefined ? {} : { baseDir });
  } catch (error) {
    expect(error).toBeInstanceOf(BootstrapError);
    return [...(error as BootstrapError).problems];
  }
  throw new Error("expected a BootstrapError");
}

const provider = (config: unknown) => ({
  ...minimal,
  certificate_providers: { mesh: { plugin_name: "file_watcher", config } },
});

describe("certificate_providers (A29 file_watcher)", () => {
  it("reads each instance, paths resolved from the bootstrap's directory, the refresh interval in ms (default 600 s)", () => {
    const bootstrap = parseBootstrap(
      {
        ...minimal,
        certificate_providers: {
          identity: { plugin_name: "file_watcher", config: { certificate_file: "c.pem", private_key_file: "/k.pem" } },
          roots: { plugin_name: "file_watcher", config: { ca_certificate_file: "ca.pem", refresh_interval: "1.5s" } },
        },
      },
      { baseDir: "/etc/grpc" },
    );
    expect(bootstrap.certificateProviders.get("identity")).toEqual({
      pluginName: "file_watcher",
      config: { certificate_file: "c.pem", private_key_file: "/k.pem" },
      fileWatcher: { certificateFile: "/etc/grpc/c.pem", privateKeyFile: "/k.pem", refreshIntervalMs: 600_000 },
    });
    expect(bootstrap.certificateProviders.get("roots")?.fileWatcher).toEqual({
      caCertificateFile: "/etc/grpc/ca.pem",
      refreshIntervalMs: 1500,
    });
  });

  it("names every bad field", () => {
    expect([
      ...problems({ ...minimal, certificate_providers: { mesh: { plugin_name: "meshca", config: {} } } }),
      ...problems(provider({ certificate_file: "c.pem" })),
      ...problems(provider({ private_key_file: "k.pem", ca_certificate_file: "ca.pem" })),
      ...problems(provider({})),
      ...problems(provider(undefined)),
      ...problems(provider("x")),
      ...problems(provider({ ca_certificate_file: 3 })),
      ...problems(provider({ ca_certificate_file: "" })),
      ...problems(provider({ ca_certificate_file: "ca.pem", refresh_interval: "10" })),
      ...problems(provider({ ca_certificate_file: "ca.pem", refresh_interval: "0s" })),
      ...problems(provider({ ca_certificate_file: "ca.pem", refresh_interval: "-1s" })),
      ...problems(provider({ ca_certificate_file: "ca.pem", refresh_interval: 600 })),
      ...problems({ ...minimal, certificate_providers: { mesh: "x" } }),
      ...problems({ ...minimal, certificate_providers: [] }),
    ]).toEqual([
      'certificate_providers.mesh.plugin_name: unknown plugin "meshca" (supported: file_watcher)',
      "certificate_providers.mesh.config: certificate_file and private_key_file must be set together (an identity needs both)",
      "certificate_providers.mesh.config: certificate_file and private_key_file must be set together (an identity needs both)",
      "certificate_providers.mesh.config: at least one of certificate_file (with private_key_file) and ca_certificate_file is required",
      "certificate_providers.mesh.config: at least one of certificate_file (with private_key_file) and ca_certificate_file is required",
      'certificate_providers.mesh.config: expected an object, got string "x"',
      "certificate_providers.mesh.config.ca_certificate_file: expected a non-empty string, got number 3",
      'certificate_providers.mesh.config.ca_certificate_file: expected a non-empty string, got string ""',
      'certificate_providers.mesh.config.refresh_interval: "10" is not a Duration (decimal seconds with an "s" suffix, e.g. "600s")',
      'certificate_providers.mesh.config.refresh_interval: "0s" must be more than zero',
      'certificate_providers.mesh.config.refresh_interval: "-1s" is negative',
      "certificate_providers.mesh.config.refresh_interval: expected a string, got number 600",
      'certificate_providers.mesh: expected an object, got string "x"',
      "certificate_providers: expected an object, got an array",
    ]);
  });

  it("reads proto-JSON Durations: fractions to the nanosecond, up to protobuf's range", () => {
    expect(parseJsonDurationMs("600s", true)).toBe(600_000);
    expect(parseJsonDurationMs("0.000000001s", true)).toBe(0.000001);
    expect(parseJsonDurationMs("315576000000s", true)).toBe(315_576_000_000_000);
    expect(parseJsonDurationMs("315576000001s", true)).toBe('"315576000001s" is more than protobuf\'s 315576000000s');
    expect(parseJsonDurationMs("1.0000000001s", true)).toMatch(/is not a Duration/);
    expect(parseJsonDurationMs("-0s", true)).toBe('"-0s" must be more than zero');
    expect(parseJsonDurationMs("0s", false)).toBe(0);
  });
});

describe("server_listener_resource_name_template (A36, A47)", () => {
  const withTemplate = (template: string, extra: object = {}) => ({
    ...minimal,
    server_listener_resource_name_template: template,
    ...extra,
  });

  it("fills %s with ip:port, IPv6 in brackets; percent-encoded in an xdstp: template", () => {
    const plain = parseBootstrap(withTemplate("grpc/server?xds.resource.listening_address=%s"));
    expect(serverListenerResourceName(plain, { host: "0.0.0.0", port: 8080 })).toBe(
      "grpc/server?xds.resource.listening_address=0.0.0.0:8080",
    );
    expect(serverListenerResourceName(plain, { host: "::", port: 80 })).toBe(
      "grpc/server?xds.resource.listening_address=[::]:80",
    );
    const xdstp = parseBootstrap(
      withTemplate("xdstp://mesh.example/envoy.config.listener.v3.Listener/grpc/server/%s", {
        authorities: { "mesh.example": {} },
      }),
    );
    expect(serverListenerResourceName(xdstp, { host: "::", port: 80 })).toBe(
      "xdstp://mesh.example/envoy.config.listener.v3.Listener/grpc/server/%5B::%5D:80",
    );
    expect(serverListenerResourceName(xdstp, { host: "10.0.0.1", port: 443 })).toBe(
      "xdstp://mesh.example/envoy.config.listener.v3.Listener/grpc/server/10.0.0.1:443",
    );
    expect(
      expandServerListenerTemplate("xdstp://a/envoy.config.listener.v3.Listener/%s/%s", {
        host: "fe80::1%eth0",
        port: 1,
      }),
    ).toBe("xdstp://a/envoy.config.listener.v3.Listener/%5Bfe80::1%25eth0%5D:1/%5Bfe80::1%25eth0%5D:1");
    expect(expandServerListenerTemplate("fixed-name", { host: "::", port: 1 })).toBe("fixed-name");
    expect(formatListeningAddress({ host: "2001:db8::1", port: 50051 })).toBe("[2001:db8::1]:50051");
  });

  it("has no default: a server asking for its name without one gets a BootstrapError naming the field", () => {
    expect(() => serverListenerResourceName(parseBootstrap(minimal), { host: "0.0.0.0", port: 1 })).toThrow(
      /server_listener_resource_name_template: is required for an xDS-enabled server/,
    );
  });

  it("names a template that cannot be used", () => {
    expect([
      ...problems(withTemplate("")),
      ...problems(withTemplate("xdstp://unknown.example/envoy.config.listener.v3.Listener/%s")),
      ...problems(withTemplate("xdstp://a/envoy.config.cluster.v3.Cluster/%s", { authorities: { a: {} } })),
      ...problems({ ...minimal, server_listener_resource_name_template: 1 }),
    ]).toEqual([
      "server_listener_resource_name_template: must not be empty",
      'server_listener_resource_name_template: authority "unknown.example" is not in authorities',
      'server_listener_resource_name_template: xdstp name "xdstp://a/envoy.config.cluster.v3.Cluster/0.0.0.0:0" names resource type envoy.config.cluster.v3.Cluster (expected envoy.config.listener.v3.Listener)',
      "server_listener_resource_name_template: expected a string, got number 1",
    ]);
    // With federation off no xdstp name can be watched anyway: the template is not checked against authorities.
    expect(
      parseBootstrap(withTemplate("xdstp://unknown.example/envoy.config.listener.v3.Listener/%s"), {
        federation: false,
      }).serverListenerResourceNameTemplate,
    ).toBe("xdstp://unknown.example/envoy.config.listener.v3.Listener/%s");
  });

  it("compares a Listener's address with the listening one as IP addresses", () => {
    expect(listenerAddressMatches({ host: "::", port: 80 }, { host: "0:0::0", port: 80 })).toBe(true);
    expect(listenerAddressMatches({ host: "::", port: 80 }, { host: "0.0.0.0", port: 80 })).toBe(false);
    expect(listenerAddressMatches({ host: "10.0.0.1", port: 80 }, { host: "10.0.0.1", port: 81 })).toBe(false);
    expect(listenerAddressMatches({ host: "localhost", port: 80 }, { host: "localhost", port: 80 })).toBe(true);
  });
});
