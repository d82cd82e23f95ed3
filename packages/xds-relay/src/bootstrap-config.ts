// The relay's upstream bootstrap written back as gRPC's JSON bootstrap with another node's `node`: what a per-node
// upstream client is created with (docs/decisions.md#relay-per-node-resources). The parsed bootstrap has every path
// resolved and every value checked, so what is written here parses to the same servers, authorities and parameters.
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type {
  Bootstrap,
  BootstrapCertificateProvider,
  BootstrapChannelCredentials,
  BootstrapConfig,
  BootstrapServerConfig,
  XdsServerConfig,
} from "@xdskit/xds-client";

function serverConfig(server: XdsServerConfig): BootstrapServerConfig {
  const creds = server.channelCredentials;
  const channel: BootstrapChannelCredentials =
    creds.type === "insecure"
      ? { type: "insecure" }
      : {
          type: "tls",
          config: {
            ...(creds.caCertificateFile === undefined ? {} : { ca_certificate_file: creds.caCertificateFile }),
            ...(creds.certificateFile === undefined ? {} : { certificate_file: creds.certificateFile }),
            ...(creds.privateKeyFile === undefined ? {} : { private_key_file: creds.privateKeyFile }),
          },
        };
  return {
    server_uri: server.serverUri,
    channel_creds: [channel],
    server_features: [...server.serverFeatures],
    api_type: server.apiType,
  };
}

/** `bootstrap` with `node` (id, cluster, locality, metadata) in place of its own. */
export function bootstrapConfigFor(bootstrap: Bootstrap, node: Node): BootstrapConfig {
  const authorities = Object.fromEntries(
    [...bootstrap.authorities].map(([name, authority]) => [
      name,
      {
        client_listener_resource_name_template: authority.clientListenerResourceNameTemplate,
        ...(authority.xdsServers === undefined ? {} : { xds_servers: authority.xdsServers.map(serverConfig) }),
        dynamic_parameters: { ...authority.dynamicParameters },
      },
    ]),
  );
  // The validated file_watcher config, its paths already resolved from the bootstrap file's directory.
  const certificateProviders = Object.fromEntries(
    [...bootstrap.certificateProviders].map(
      ([name, { pluginName, fileWatcher }]): [string, BootstrapCertificateProvider] => [
        name,
        {
          plugin_name: pluginName,
          config: {
            ...(fileWatcher.certificateFile === undefined ? {} : { certificate_file: fileWatcher.certificateFile }),
            ...(fileWatcher.privateKeyFile === undefined ? {} : { private_key_file: fileWatcher.privateKeyFile }),
            ...(fileWatcher.caCertificateFile === undefined
              ? {}
              : { ca_certificate_file: fileWatcher.caCertificateFile }),
            refresh_interval: `${(fileWatcher.refreshIntervalMs / 1000).toFixed(9)}s`,
          },
        },
      ],
    ),
  );
  return {
    xds_servers: bootstrap.xdsServers.map(serverConfig),
    node: {
      id: node.id,
      cluster: node.cluster,
      ...(node.locality
        ? { locality: { region: node.locality.region, zone: node.locality.zone, sub_zone: node.locality.subZone } }
        : {}),
      ...(node.metadata ? { metadata: node.metadata } : {}),
    },
    authorities,
    dynamic_parameters: { ...bootstrap.dynamicParameters },
    client_default_listener_resource_name_template: bootstrap.clientDefaultListenerResourceNameTemplate,
    ...(bootstrap.serverListenerResourceNameTemplate === undefined
      ? {}
      : { server_listener_resource_name_template: bootstrap.serverListenerResourceNameTemplate }),
    certificate_providers: certificateProviders,
  };
}

/** JSON with object keys sorted, so that equal values write equal text. */
function canonicalJson(value: JsonValue | undefined): string {
  if (value === undefined) return "";
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const object = value as JsonObject;
  return `{${Object.keys(object)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key])}`)
    .join(",")}}`;
}

/**
 * The key of a node as its upstream stream presents it: id, cluster, locality and metadata (what the relay's client
 * sends for it), so two streams of one node share one upstream stream. "" for none.
 */
export function nodeKey(node: Node | undefined): string {
  if (node === undefined) return "";
  const locality = node.locality ? [node.locality.region, node.locality.zone, node.locality.subZone] : null;
  return canonicalJson([node.id, node.cluster, locality, node.metadata ?? null] as JsonValue);
}
