// A29 certificate providers at run time: the identity and roots the bootstrap's `certificate_providers` instances
// serve, for the TLS of both sides (an xDS-enabled server's filter chains, a client's clusters).
// `createCertificateProviders(bootstrap, options?): CertificateProviders` (certificate-providers.ts) makes them.

import type { Logger } from "../observability/logger.js";
import type { Clock } from "../shared/clock.js";

/** An identity: a certificate chain (leaf first) and the leaf's private key, as PEM. Checked to belong together. */
export interface CertificateIdentity {
  readonly certChainPem: string;
  readonly privateKeyPem: string;
}

/** Root certificates that verify peers, as PEM (one or more certificates). */
export interface CertificateRoots {
  readonly caPem: string;
}

/**
 * What an instance serves now: each part is the last good one read (a part the instance is not configured for, or
 * has not read successfully yet, is absent). Frozen; a change makes a new object.
 */
export interface CertificateMaterial {
  readonly identity?: CertificateIdentity;
  readonly roots?: CertificateRoots;
}

/** One certificate provider instance of the bootstrap, shared by every user of its name. */
export interface CertificateProvider {
  readonly instanceName: string;
  readonly pluginName: string;
  /** The material now; `undefined` parts until first read well (a server refuses handshakes that need them). */
  current(): CertificateMaterial;
  /**
   * Calls `listener` after each change of the material (new bytes that validate), never for a refresh that read
   * the same bytes or failed. Returns the function that stops it. Listeners run synchronously, each isolated (a
   * throwing listener is logged).
   */
  watch(listener: (material: CertificateMaterial) => void): () => void;
  /**
   * The last problem reading or validating a part (`certificate_file: ENOENT ...`), undefined once every configured
   * part read well. The material keeps the last good part meanwhile.
   */
  readonly lastError: string | undefined;
  /** Reads the files now (as the refresh timer does); returns whether the material changed. */
  refresh(): boolean;
}

/** The instances of one bootstrap, started when first asked for. */
export interface CertificateProviders {
  /** The instance of that name (started, and its files read, on the first call), or undefined if not configured. */
  get(instanceName: string): CertificateProvider | undefined;
  /** The configured instance names. */
  readonly names: readonly string[];
  /** Stops every refresh timer; instances keep their last material but no longer change. */
  close(): void;
}

export interface CertificateProvidersOptions {
  /** Read errors and rotations are logged here (`[certificate-provider <name>] ...`). */
  readonly logger?: Logger;
  /** Time for the refresh timers (tests use a virtual clock); default the system clock, timers unref'd. */
  readonly clock?: Clock;
}
