// Who is at the other end of a stream, as policies see it. Types only (no Node types: they are public).

/** A client certificate that the server's CA verified during the TLS handshake. */
export interface PeerCertificate {
  /** The subject's distinguished name, as Node formats it (`CN=node-1`, one attribute per line). */
  readonly subject: string;
  /** The subject's common name (the last CN), if any. */
  readonly commonName: string | undefined;
  readonly issuer: string;
  /** Subject alternative names by kind, in certificate order. */
  readonly uris: readonly string[];
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
  /**
   * The SPIFFE ID: the certificate's one `spiffe://` URI SAN (an X.509-SVID has exactly one); undefined when it has
   * none, or several (ambiguous).
   */
  readonly spiffeId: string | undefined;
  /** SHA-256 fingerprint, `AB:CD:…`. */
  readonly fingerprint256: string;
  readonly serialNumber: string;
  /** The certificate, DER-encoded (`new X509Certificate(raw)` of node:crypto reads it again). */
  readonly raw: Uint8Array;
}

/** Who is at the other end of a connection. */
export interface PeerIdentity {
  /** `address:port` of the client. */
  readonly address: string | undefined;
  /** The connection is TLS. */
  readonly tls: boolean;
  /** The client's certificate, verified by the server's CA; undefined without mTLS or when it presented none. */
  readonly certificate: PeerCertificate | undefined;
  /**
   * Why a certificate the client presented did not verify (only with `requireClientCert: false`, where the handshake
   * lets such a client through): its streams are refused with UNAUTHENTICATED.
   */
  readonly certificateError: string | undefined;
}
