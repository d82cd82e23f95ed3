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

export interface CertificateProviderConfig {
  readonly pluginName: string;
  readonly config: unknown;
}

/** A validated bootstrap (gRPC's JSON bootstrap format). */
export interface Bootstrap {
  readonly xdsServers: readonly XdsServerConfig[];
  readonly node: NodeConfig;
  readonly authorities: ReadonlyMap<string, AuthorityConfig>;
  /** A67: parameters sent with every old-style (non-xdstp) name. */
  readonly dynamicParameters: Readonly<Record<string, string>>;
  readonly clientDefaultListenerResourceNameTemplate: string;
  readonly serverListenerResourceNameTemplate?: string;
  readonly certificateProviders: ReadonlyMap<string, CertificateProviderConfig>;
}
