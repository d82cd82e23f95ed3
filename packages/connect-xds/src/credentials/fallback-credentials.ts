// The types of backend connections' security that public declarations name (the transport's options, ClusterImpl
// in ./internal), in a file of its own so that those declarations need none of Node's types (upstream-tls.ts has
// the dialers).

/** The identity of a cluster's connection security (upstream-tls.ts): equal keys mean equal TLS. */
export interface SecurityKey {
  readonly key: string;
}

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
