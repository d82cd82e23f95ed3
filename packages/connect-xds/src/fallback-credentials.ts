// The credentials of backends whose cluster has no UpstreamTlsContext (A29's fallback), in a file of its own: the
// transport's options name this type, and its declaration needs none of Node's types.

/** What a cluster without an UpstreamTlsContext connects with (gRPC's fallback credentials). */
export type FallbackCredentials =
  | { readonly type: "insecure" }
  | {
      readonly type: "tls";
      /** Roots that verify the backends, as PEM; default Node's bundled roots. */
      readonly caPem?: string;
      /** For mTLS: a certificate chain, leaf first, and its private key, as PEM. */
      readonly certChainPem?: string;
      readonly privateKeyPem?: string;
      /** The name sent as SNI and checked against the backend's certificate; default the endpoint's host. */
      readonly serverName?: string;
    };
