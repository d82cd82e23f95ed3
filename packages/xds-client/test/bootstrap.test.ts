import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildCluster, createManagementServer } from "@xdskit/control-plane";
import { describe, expect, it } from "vitest";
import { MAX_NODE_METADATA_BYTES, MAX_NODE_METADATA_DEPTH } from "../src/bootstrap/bootstrap-node.js";
import {
  BootstrapError,
  type ClusterUpdate,
  clusterResourceType,
  createXdsClient,
  parseBootstrap,
  parseBootstrapText,
} from "../src/index.js";

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

  describe("server_uri is read as gRPC reads a channel target", () => {
    const withUri = (server_uri: unknown) => ({ xds_servers: [{ server_uri, channel_creds: [{ type: "insecure" }] }] });

    it.each([
      "cp",
      "cp:",
      "cp:8080",
      "cp.example.com.:1",
      "a_b:1",
      "10.0.0.1:5",
      "[::1]:8",
      "[::1]",
      "::1",
      "dns:cp:2",
      "dns:///cp:1",
      "dns:///[2001:db8::1]:3",
      "ipv4:10.0.0.1",
      "ipv4:10.0.0.1:5",
      "ipv4:10.0.0.1:5,10.0.0.2:6,10.0.0.3",
      "ipv6:[::1]:7,[::2]:8",
      "ipv6:[::1]:7",
      "ipv6:::1",
      "unix:relative.sock",
      "unix:/run/xds.sock",
      "unix:///run/xds.sock",
      "unix:///run/with%20space.sock",
      "unix-abstract:xds",
    ])("accepts %s", (uri) => {
      expect(parseBootstrap(withUri(uri)).xdsServers[0]?.serverUri).toBe(uri);
    });

    it.each([
      ["exa mple:443", '"exa mple" is not a valid host name or IP address'],
      ["127.0.0.1:99999", 'port "99999" is not a number from 1 to 65535'],
      ["cp:0", 'port "0" is not a number from 1 to 65535'],
      ["cp:-1", 'port "-1" is not a number from 1 to 65535'],
      ["cp:http", 'port "http" is not a number from 1 to 65535'],
      ["[::1:443", '"[::1:443": "[" without a matching "]"'],
      ["[::1]x", '"[::1]x": unexpected "x" after "]"'],
      ["[cp]:1", '"cp" is not an IPv6 address'],
      ["[fe80::1%eth0]:1", '"fe80::1%eth0": IPv6 zone ids are not supported'],
      ["1::2::3", '"1::2::3" is neither host:port nor an IPv6 address'],
      [":443", '":443": no host'],
      ["a..b:1", '"a..b" is not a valid host name or IP address'],
      ["-a:1", '"-a" is not a valid host name or IP address'],
      ["dns://8.8.8.8/cp:3", '"dns://8.8.8.8/cp:3": a DNS server authority is not supported (write dns:///host:port)'],
      ["dns://cp", '"dns://cp": no host after the authority'],
      ["ipv4:::1", '"::1" is not an IPv4 address'],
      ["ipv4:cp:1", '"cp" is not an IPv4 address'],
      ["ipv6:10.0.0.1", '"10.0.0.1" is not an IPv6 address'],
      ["ipv4:1.2.3.4:1,cp:2", '"cp" is not an IPv4 address'],
      ["ipv4:1.2.3.4:1,", '"ipv4:1.2.3.4:1,": an empty address in the list'],
      ["ipv6:[::1]:1,10.0.0.1:2", '"10.0.0.1" is not an IPv6 address'],
      ["unix:", '"unix:": no socket path'],
      ["unix://run/xds.sock", '"unix://run/xds.sock": a unix target takes no authority (write unix:///absolute/path)'],
      ["unix:/bad%zz", '"unix:/bad%zz": bad percent-encoding in the path'],
      [
        "http://cp:80",
        'unsupported scheme "http" (supported: host[:port], [ipv6][:port], dns:[///]host[:port], ipv4:, ipv6:, unix:path, unix:///path, unix-abstract:name)',
      ],
      ["", "must not be empty"],
    ])("rejects %j, naming the field", (uri, message) => {
      expect(problems(withUri(uri))).toEqual([`xds_servers[0].server_uri: ${message}`]);
    });

    it("in an authority's servers too", () => {
      expect(problems({ ...minimal, authorities: { a: { xds_servers: withUri("cp:99999").xds_servers } } })).toEqual([
        'authorities.a.xds_servers[0].server_uri: port "99999" is not a number from 1 to 65535',
      ]);
    });
  });

  it("an authority's empty xds_servers means the top-level servers, as in gRPC", async () => {
    const b = parseBootstrap({ ...minimal, authorities: { "a.example": { xds_servers: [] } } });
    expect(b.authorities.get("a.example")?.xdsServers).toBeUndefined();
    // Only the top-level list must not be empty.
    expect(problems({ ...minimal, xds_servers: [] })).toEqual(["xds_servers: must hold at least one server"]);
    // Over HTTP/2: the authority's resource is fetched from the top-level server.
    const server = await createManagementServer({ host: "127.0.0.1", port: 0 });
    const name = "xdstp://a.example/envoy.config.cluster.v3.Cluster/c";
    server.setResources([
      buildCluster({ name, edsServiceName: "xdstp://a.example/envoy.config.endpoint.v3.ClusterLoadAssignment/c" }),
    ]);
    const client = createXdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }] }],
        authorities: { "a.example": { xds_servers: [] } },
      },
      env: {},
    });
    try {
      const cluster = await new Promise<ClusterUpdate>((resolve, reject) => {
        client.watch(clusterResourceType, name, {
          onResourceChanged: (result) => (result.ok ? resolve(result.resource) : reject(result.error)),
          onAmbientError: reject,
        });
      });
      expect(cluster.name).toBe(name);
    } finally {
      await client.close();
      await server.close();
    }
  });

  describe("node.metadata is bounded", () => {
    const withMetadata = (metadata: unknown) => ({ ...minimal, node: { id: "n", metadata } });
    /** `{a: {a: ... {}}}`, `levels` objects deep. */
    function nested(levels: number): Record<string, unknown> {
      const root: Record<string, unknown> = {};
      let current = root;
      for (let i = 1; i < levels; i++) {
        const next: Record<string, unknown> = {};
        current.a = next;
        current = next;
      }
      return root;
    }

    it(`accepts ${MAX_NODE_METADATA_DEPTH} levels and rejects one more, naming where`, () => {
      expect(parseBootstrap(withMetadata(nested(MAX_NODE_METADATA_DEPTH))).node.metadata).toBeDefined();
      const at = `node.metadata${".a".repeat(MAX_NODE_METADATA_DEPTH)}`;
      expect(problems(withMetadata(nested(MAX_NODE_METADATA_DEPTH + 1)))).toEqual([
        `node.metadata: nested deeper than ${MAX_NODE_METADATA_DEPTH} levels (at ${at})`,
      ]);
      let list: unknown = 1;
      for (let i = 0; i < MAX_NODE_METADATA_DEPTH; i++) list = [list];
      expect(problems(withMetadata({ list }))).toEqual([
        `node.metadata: nested deeper than ${MAX_NODE_METADATA_DEPTH} levels (at node.metadata.list${"[0]".repeat(31)})`,
      ]);
    });

    it("rejects 5,000 levels cleanly, as an object and as JSON text", () => {
      expect(problems(withMetadata(nested(5000)))).toHaveLength(1);
      const text = JSON.stringify(withMetadata({})).replace(
        '"metadata":{}',
        `"metadata":{"x":${"[".repeat(5000)}${"]".repeat(5000)}}`,
      );
      expect(() => parseBootstrapText(text)).toThrow(/node\.metadata: nested deeper than 32 levels/);
      // A cycle is an infinite nesting.
      const cycle: Record<string, unknown> = {};
      cycle.self = cycle;
      expect(problems(withMetadata(cycle))).toHaveLength(1);
    });

    it(`rejects more than ${MAX_NODE_METADATA_BYTES} bytes of JSON`, () => {
      const big = { blob: "x".repeat(MAX_NODE_METADATA_BYTES) };
      expect(problems(withMetadata(big))).toEqual([
        `node.metadata: ${MAX_NODE_METADATA_BYTES + 11} bytes as JSON, more than the ${MAX_NODE_METADATA_BYTES} allowed`,
      ]);
      expect(
        parseBootstrap(withMetadata({ blob: "x".repeat(MAX_NODE_METADATA_BYTES - 11) })).node.metadata,
      ).toBeDefined();
    });

    it("rejects values that have no JSON form (only reachable through the bootstrap option)", () => {
      expect(problems(withMetadata({ n: Number.NaN }))).toEqual(["node.metadata.n: NaN has no JSON form"]);
      expect(problems(withMetadata({ l: [1, Number.POSITIVE_INFINITY] }))).toEqual([
        "node.metadata.l[1]: Infinity has no JSON form",
      ]);
      expect(problems(withMetadata({ u: undefined }))).toEqual([
        "node.metadata.u: expected a JSON value, got undefined",
      ]);
      expect(problems(withMetadata({ b: 1n }))).toEqual(["node.metadata.b: expected a JSON value, got bigint"]);
      expect(problems(withMetadata({ d: new Date(0) }))).toEqual([
        "node.metadata.d: expected a JSON value, got an instance of a class",
      ]);
    });
  });

  it("says what is wrong with every kind of bad field (no `undefined undefined`)", () => {
    const all = [
      ...problems(undefined),
      ...problems([]),
      ...problems({ xds_servers: {} }),
      ...problems({ xds_servers: [{ channel_creds: [{ type: "insecure" }] }] }),
      ...problems({ xds_servers: [{ server_uri: "cp" }] }),
      ...problems({ xds_servers: [{ server_uri: "cp", channel_creds: [{}] }] }),
      ...problems({ xds_servers: [{ server_uri: "cp", channel_creds: "insecure" }] }),
      ...problems({ xds_servers: [{ server_uri: "cp", channel_creds: ["insecure"] }] }),
      ...problems({
        xds_servers: [{ server_uri: "cp", channel_creds: [{ type: "tls", config: { certificate_file: "c.pem" } }] }],
      }),
      ...problems({ xds_servers: [{ server_uri: "cp", channel_creds: [{ type: "tls", config: 1 }] }] }),
      ...problems({ ...minimal, xds_servers: [{ ...minimal.xds_servers[0], server_features: "x" }] }),
      ...problems({ ...minimal, xds_servers: [{ ...minimal.xds_servers[0], server_features: [1] }] }),
      ...problems({ ...minimal, node: "n" }),
      ...problems({ ...minimal, node: { locality: { zone: 1 } } }),
      ...problems({ ...minimal, node: { metadata: [] } }),
      ...problems({ ...minimal, authorities: [] }),
      ...problems({ ...minimal, authorities: { a: null } }),
      ...problems({ ...minimal, authorities: { a: { dynamic_parameters: [] } } }),
      ...problems({ ...minimal, client_default_listener_resource_name_template: 5 }),
      ...problems({ ...minimal, certificate_providers: { p: {} } }),
      ...problems({ ...minimal, certificate_providers: { p: { plugin_name: false } } }),
    ];
    expect(all).toEqual([
      "$: expected an object, got undefined",
      "xds_servers: is required",
      "$: expected an object, got an array",
      "xds_servers: is required",
      "xds_servers: expected an array, got an object",
      "xds_servers[0].server_uri: is required",
      "xds_servers[0].channel_creds: is required",
      "xds_servers[0].channel_creds[0].type: is required",
      "xds_servers[0].channel_creds: no supported channel credentials (supported: insecure, tls)",
      'xds_servers[0].channel_creds: expected an array, got string "insecure"',
      'xds_servers[0].channel_creds[0]: expected an object, got string "insecure"',
      "xds_servers[0].channel_creds[0].config: certificate_file and private_key_file must be set together",
      "xds_servers[0].channel_creds[0].config: expected an object, got number 1",
      'xds_servers[0].server_features: expected an array, got string "x"',
      "xds_servers[0].server_features[0]: expected a string, got number 1",
      'node: expected an object, got string "n"',
      "node.locality.zone: expected a string, got number 1",
      "node.metadata: expected an object, got an array",
      "authorities: expected an object, got an array",
      "authorities.a: expected an object, got null",
      "authorities.a.dynamic_parameters: expected an object, got an array",
      "client_default_listener_resource_name_template: expected a string, got number 5",
      "certificate_providers.p.plugin_name: is required",
      "certificate_providers.p.plugin_name: expected a string, got boolean false",
    ]);
  });
});
