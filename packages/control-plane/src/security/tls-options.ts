/**
 * TLS for the management server (docs/security.md). Each of the certificate, the key and the CA is given either as
 * PEM text (`cert`, `key`, `ca`) or as a file (`certFile`, `keyFile`, `caFile`), never both: PEM text is used as it
 * is, files are read at start and read again when they change, so that a rotated certificate serves new connections
 * without a restart (connections already open keep the certificate they were made with).
 */
export interface ServerTlsOptions {
  /** The server's certificate chain, PEM. */
  readonly cert?: string | Uint8Array;
  readonly certFile?: string;
  /** The private key of `cert`, PEM. */
  readonly key?: string | Uint8Array;
  readonly keyFile?: string;
  /** The CAs that sign client certificates, PEM: with it, clients are asked for a certificate (mTLS). */
  readonly ca?: string | Uint8Array;
  readonly caFile?: string;
  /**
   * With a CA: whether a client must present a certificate the CA signed (true, the default: the TLS handshake fails
   * without one). False: a client may present none (its streams are anonymous: see `authorize`), but a certificate it
   * presents must verify.
   */
  readonly requireClientCert?: boolean;
  /** How often the files are read again even without a change event (events can be missed). Default 60 s; 0: never. */
  readonly refreshIntervalMs?: number;
}
