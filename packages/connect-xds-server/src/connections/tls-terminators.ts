// A29 on the server: TLS for the connections of a filter chain with a DownstreamTlsContext, from the certificate
// provider instances it names, and for the fallback credentials. Each distinct setting (identity instance, roots
// instance, whether a client certificate is required) has one `tls.Server` that never listens: a connection is
// handed to it (`emit("connection")`), so Node runs the handshake and checks the client certificate as for any TLS
// server, and the secured socket comes back through `secureConnection`. Its SecureContext is rebuilt only after one
// of its providers reports new material, so a rotation reaches the next handshake without a restart, while open
// connections keep the context they were made with and their calls never notice.
import type { Socket } from "node:net";
import { createServer as createTlsServer, type SecureContextOptions, type Server, type TLSSocket } from "node:tls";
import type { CertificateProviders, DownstreamTlsConfig } from "@xdskit/xds-client";
import type { ServerLogger } from "../logging.js";

/** Runs TLS handshakes under one setting. */
export interface TlsTerminator {
  /** Asks the client for a certificate (the chain has a validation context). */
  readonly requestCert: boolean;
  /** Refuses a client without a valid certificate (Node refuses it before `onSecure`). */
  readonly requireClientCertificate: boolean;
  /**
   * Starts the handshake on `socket`; `onSecure` gets the TLS socket once it completes (a socket whose handshake
   * fails is destroyed, `onSecure` never called). The socket's addresses pair it with its TLS socket.
   */
  secure(socket: Socket, onSecure: (tlsSocket: TLSSocket) => void): void;
}

export interface TlsTerminators {
  /** The terminator of a chain's DownstreamTlsContext, or why there is none yet (no material read). */
  forChain(config: DownstreamTlsConfig): TlsTerminator | { readonly error: string };
  /** Stops watching the providers. */
  close(): void;
}

/** Where a connection is, by its TCP 4-tuple: what pairs a raw socket and the TLS socket made over it. */
function tupleOf(socket: Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}|${socket.localAddress}|${socket.localPort}`;
}

/** A terminator over a never-listening tls.Server; `update` replaces its material for later handshakes. */
export function createTlsTerminator(
  material: SecureContextOptions,
  requestCert: boolean,
  requireClientCertificate: boolean,
  logger: ServerLogger,
): TlsTerminator & { update(material: SecureContextOptions): void } {
  const waiting = new Map<string, (tlsSocket: TLSSocket) => void>();
  const server: Server = createTlsServer({
    ...material,
    requestCert,
    rejectUnauthorized: requestCert && requireClientCertificate,
    ALPNProtocols: ["h2"],
    // The acceptor's own timer bounds the handshake and the HTTP/2 preface together.
    handshakeTimeout: 0,
  });
  server.on("secureConnection", (tlsSocket: TLSSocket) => {
    const tuple = tupleOf(tlsSocket);
    const onSecure = waiting.get(tuple);
    waiting.delete(tuple);
    if (onSecure === undefined) tlsSocket.destroy();
    else onSecure(tlsSocket);
  });
  server.on("tlsClientError", (error: Error, tlsSocket: TLSSocket) => {
    logger.debug(
      () => `TLS handshake with ${tlsSocket.remoteAddress}:${tlsSocket.remotePort} failed: ${error.message}`,
    );
  });
  return {
    requestCert,
    requireClientCertificate,
    secure(socket, onSecure) {
      const tuple = tupleOf(socket);
      waiting.set(tuple, onSecure);
      socket.once("close", () => {
        if (waiting.get(tuple) === onSecure) waiting.delete(tuple);
      });
      server.emit("connection", socket);
    },
    update(next) {
      server.setSecureContext(next);
    },
  };
}

interface Entry {
  terminator: ReturnType<typeof createTlsTerminator> | undefined;
  /** Set when a provider changed since the terminator's material was read. */
  stale: boolean;
  readonly stops: (() => void)[];
}

/**
 * The terminators of the chains' DownstreamTlsContexts. `providers` is called at the first TLS chain (A36 lets a
 * server load credentials lazily; the bootstrap's instances start reading files only then).
 */
export function createTlsTerminators(providersOf: () => CertificateProviders, logger: ServerLogger): TlsTerminators {
  const entries = new Map<string, Entry>();
  let providers: CertificateProviders | undefined;

  /** The chain's material now, or why there is none. */
  function materialOf(config: DownstreamTlsConfig, providers: CertificateProviders): SecureContextOptions | string {
    const identityProvider = providers.get(config.identityCertificate.instanceName);
    if (identityProvider === undefined) {
      return `certificate provider instance "${config.identityCertificate.instanceName}" is not in the bootstrap`;
    }
    const identity = identityProvider.current().identity;
    if (identity === undefined) {
      const why = identityProvider.lastError === undefined ? "" : ` (${identityProvider.lastError})`;
      return `certificate provider instance "${identityProvider.instanceName}" has no identity certificate yet${why}`;
    }
    if (config.caCertificates === undefined) return { cert: identity.certChainPem, key: identity.privateKeyPem };
    const rootsProvider = providers.get(config.caCertificates.instanceName);
    if (rootsProvider === undefined) {
      return `certificate provider instance "${config.caCertificates.instanceName}" is not in the bootstrap`;
    }
    const roots = rootsProvider.current().roots;
    if (roots === undefined) {
      const why = rootsProvider.lastError === undefined ? "" : ` (${rootsProvider.lastError})`;
      return `certificate provider instance "${rootsProvider.instanceName}" has no CA certificates yet${why}`;
    }
    return { cert: identity.certChainPem, key: identity.privateKeyPem, ca: roots.caPem };
  }

  function entryFor(key: string, config: DownstreamTlsConfig, providers: CertificateProviders): Entry {
    const found = entries.get(key);
    if (found !== undefined) return found;
    const entry: Entry = { terminator: undefined, stale: true, stops: [] };
    for (const instance of [config.identityCertificate, config.caCertificates]) {
      if (instance === undefined) continue;
      const provider = providers.get(instance.instanceName);
      if (provider !== undefined) {
        entry.stops.push(
          provider.watch(() => {
            entry.stale = true;
          }),
        );
      }
    }
    entries.set(key, entry);
    return entry;
  }

  return {
    forChain(config) {
      const requestCert = config.caCertificates !== undefined;
      const required = requestCert && config.requireClientCertificate;
      const key = `${config.identityCertificate.instanceName}\u0000${config.caCertificates?.instanceName ?? ""}\u0000${required}`;
      providers ??= providersOf();
      const entry = entryFor(key, config, providers);
      if (entry.stale) {
        entry.stale = false;
        const material = materialOf(config, providers);
        try {
          if (typeof material === "string") throw new Error(material);
          if (entry.terminator === undefined) {
            entry.terminator = createTlsTerminator(material, requestCert, required, logger);
          } else {
            entry.terminator.update(material);
          }
        } catch (error) {
          const why = error instanceof Error ? error.message : String(error);
          // Nothing good yet: try again at the next handshake (reading the providers' material reads no file).
          if (entry.terminator === undefined) {
            entry.stale = true;
            return { error: why };
          }
          // Keep the last good material: a rotation caught half-way must not stop handshakes.
          logger.warn(`TLS material changed but is not usable (${why}); handshakes keep the previous certificate`);
        }
      }
      return entry.terminator!;
    },
    close() {
      for (const entry of entries.values()) for (const stop of entry.stops) stop();
      entries.clear();
    },
  };
}
