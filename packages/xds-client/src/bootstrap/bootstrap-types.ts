/** Channel credentials of one xDS server (the first one of `channel_creds` this client supports). */
export type ChannelCredentialsConfig =
  | { readonly type: "insecure" }
  | {
      readonly type: "tls";
      /** PEM files; without a CA file the system roots are used. */
      readonly caCertificateFile?: string;
      readonly certificateFile?: string;
      readonly privateKeyFile?: string;
    };

/** One entry of `xds_servers`. */
export interface XdsServerConfig {
  readonly serverUri: string;
  readonly channelCredentials: ChannelCredentialsConfig;
  /** `server_features` as written (unknown ones kept, for the dedupe key and CSDS). */
  readonly serverFeatures: readonly string[];
  /** `GRPC` (state of the world, default) or `DELTA_GRPC` (incremental). */
  readonly apiType: "GRPC" | "DELTA_GRPC";
  readonly ignoreResourceDeletion: boolean;
  readonly failOnDataErrors: boolean;
  readonly resourceTimerIsTransientError: boolean;
  readonly trustedXdsServer: boolean;
  /** Equal for two configs that may share one channel (A47: URI, credentials and known features). */
  readonly key: string;
}

export interface NodeConfig {
  readonly id: string;
  readonly cluster: string;
  readonly locality?: { readonly region: string; readonly zone: string; readonly subZone: string };
  /** `metadata` as a JSON object (google.protobuf.Struct). */
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly userAgentName: string;
  readonly userAgentVersion: string;
}

export interface AuthorityConfig {
  readonly name: string;
  readonly clientListenerResourceNameTemplate: string;
  /** Undefined: the authority uses the top-level servers. */
  readonly xdsServers?: readonly XdsServerConfig[];
  /** A67: parameters sent with every xdstp name of this authority. */
  readonly dynamicParameters: Readonly<Record<string, string>>;
}

/**
 * The `file_watcher` certificate provider plugin's config (A29): PEM files read at start and every
 * `refresh_interval`. Relative paths are resolved from the bootstrap file's directory. The identity needs both the
 * certificate and its key; at least one of the identity and the CA is set.
 */
export interface FileWatcherConfig {
  /** The identity certificate chain (leaf first). */
  readonly certificateFile?: string;
  /** The identity certificate's private key. */
  readonly privateKeyFile?: string;
  /** The root certificates that verify peers. */
  readonly caCertificateFile?: string;
  /** `refresh_interval` (a proto-JSON Duration such as `"600s"`); default 600 000 (10 minutes, as gRPC). */
  readonly refreshIntervalMs: number;
}

/**
 * One entry of `certificate_providers`: an instance that `DownstreamTlsContext` / `UpstreamTlsContext` name by its
 * key. `file_watcher` is the one plugin gRPC ships, and the one this client knows; any other plugin name is a
 * bootstrap error (docs/decisions.md#certificate-providers).
 */
export interface CertificateProviderConfig {
  readonly pluginName: "file_watcher";
  /** `config` as written. */
  readonly config: unknown;
  /** `config`, validated. */
  readonly fileWatcher: FileWatcherConfig;
}

/** A validated bootstrap (gRPC's JSON bootstrap format). */
export interface Bootstrap {
  readonly xdsServers: readonly XdsServerConfig[];
  readonly node: NodeConfig;
  readonly authorities: ReadonlyMap<string, AuthorityConfig>;
  /** A67: parameters sent with every old-style (non-xdstp) name. */
  readonly dynamicParameters: Readonly<Record<string, string>>;
  readonly clientDefaultListenerResourceNameTemplate: string;
  /**
   * A36: the name of the Listener an xDS-enabled server watches; `%s` stands for its listening `ip:port`
   * (`serverListenerResourceName` fills it in). No default: a server cannot start without it.
   */
  readonly serverListenerResourceNameTemplate?: string;
  /** A29: certificate provider instances by name. */
  readonly certificateProviders: ReadonlyMap<string, CertificateProviderConfig>;
}

/**
 * The bootstrap as written: gRPC's JSON bootstrap format, the input of `createXdsClient({ bootstrap })`. It names
 * the fields this client reads; the parser checks every value and, as gRPC does, ignores fields it does not know
 * (JSON text may carry them; an object literal of this type may not, so typos are caught).
 */
export interface BootstrapConfig {
  readonly xds_servers: readonly BootstrapServerConfig[];
  readonly node?: BootstrapNodeConfig;
  /** A47 federation: one entry per xdstp authority (ignored when federation is switched off). */
  readonly authorities?: Readonly<Record<string, BootstrapAuthorityConfig>>;
  /** A67: parameters sent with every old-style (non-xdstp) name. */
  readonly dynamic_parameters?: Readonly<Record<string, string>>;
  /** `%s` is replaced by the data-plane target's name; default `%s`. */
  readonly client_default_listener_resource_name_template?: string;
  /**
   * A36: the Listener an xDS-enabled server watches; `%s` becomes the listening `ip:port` (`[v6]:port`), percent-encoded
   * in an `xdstp:` template, whose authority must be in `authorities` (A47).
   */
  readonly server_listener_resource_name_template?: string;
  /** A29: certificate provider instances, by the name the TLS contexts of clusters and listeners give. */
  readonly certificate_providers?: Readonly<Record<string, BootstrapCertificateProvider>>;
}

/** One entry of `certificate_providers` as written. */
export interface BootstrapCertificateProvider {
  /** `file_watcher` (the only plugin gRPC ships). */
  readonly plugin_name: string;
  readonly config?: {
    /** PEM files; relative paths resolved from the bootstrap file's directory. */
    readonly certificate_file?: string;
    readonly private_key_file?: string;
    readonly ca_certificate_file?: string;
    /** A proto-JSON Duration, e.g. `"600s"` (the default) or `"1.5s"`. */
    readonly refresh_interval?: string;
    readonly [key: string]: unknown;
  };
  readonly [key: string]: unknown;
}

/** One entry of `xds_servers` as written. */
export interface BootstrapServerConfig {
  /** `host:port`, `[v6]:port`, or with a scheme such as `dns:///host:port`. */
  readonly server_uri: string;
  /** The first entry of a supported type (`insecure`, `tls`) is used; entries of other types are skipped. */
  readonly channel_creds: readonly BootstrapChannelCredentials[];
  /**
   * The client acts on `ignore_resource_deletion`, `fail_on_data_errors`, `resource_timer_is_transient_error` and
   * `trusted_xds_server`; it ignores others.
   */
  readonly server_features?: readonly string[];
  /** `GRPC` (state of the world, the default) or `DELTA_GRPC` (incremental). */
  readonly api_type?: "GRPC" | "DELTA_GRPC";
}

/** One entry of `channel_creds` as written. */
export interface BootstrapChannelCredentials {
  /** `insecure`, `tls`, or a type this client does not support (skipped). */
  readonly type: string;
  /** For `tls`: PEM files, relative paths resolved from the bootstrap file's directory. No CA file: system roots. */
  readonly config?: {
    readonly ca_certificate_file?: string;
    readonly certificate_file?: string;
    readonly private_key_file?: string;
    readonly [key: string]: unknown;
  };
}

/** `node` as written. */
export interface BootstrapNodeConfig {
  readonly id?: string;
  readonly cluster?: string;
  readonly locality?: { readonly region?: string; readonly zone?: string; readonly sub_zone?: string };
  /** Any JSON object (sent as a google.protobuf.Struct). */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** One entry of `authorities` as written. */
export interface BootstrapAuthorityConfig {
  /** Must start with `xdstp://<authority>/`; default `xdstp://<authority>/envoy.config.listener.v3.Listener/%s`. */
  readonly client_listener_resource_name_template?: string;
  /** Absent or empty: the top-level `xds_servers`. */
  readonly xds_servers?: readonly BootstrapServerConfig[];
  readonly dynamic_parameters?: Readonly<Record<string, string>>;
}
