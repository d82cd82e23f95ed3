// The public shape of an xDS-enabled Connect server. Portable types only (no Node types), so that the entry point
// type-checks for any consumer.
import type { ConnectRouter, ConnectRouterOptions } from "@connectrpc/connect";
import type { BootstrapConfig, Logger, XdsClient } from "@xdskit/xds-client";
import type { ServingStatus } from "./serving/serving-status.js";

/**
 * What connections use on a filter chain without a `transport_socket` (A29's fallback credentials): plaintext, or
 * TLS with a certificate the application gives (and, with `caPem`, client certificates verified against it).
 */
export type FallbackCredentials =
  | { readonly type: "insecure" }
  | {
      readonly type: "tls";
      /** The certificate chain, leaf first, as PEM. */
      readonly certChainPem: string;
      /** The leaf's private key, as PEM. */
      readonly privateKeyPem: string;
      /** Roots that verify client certificates, as PEM; without them clients are not asked for one. */
      readonly caPem?: string;
      /** With `caPem`: refuse a client without a valid certificate. Default true. */
      readonly requireClientCertificate?: boolean;
    };

export interface XdsServerOptions {
  /** The application's services, as `connectNodeAdapter` takes them. */
  readonly routes: (router: ConnectRouter) => void;
  /**
   * Connect's router options (interceptors, compression, read limits, ...), passed to `connectNodeAdapter`.
   * `readMaxBytes` defaults to gRPC's 4 MiB (`DEFAULT_READ_MAX_BYTES`) rather than connect-node's 4 GiB.
   */
  readonly connectOptions?: ConnectRouterOptions;
  /**
   * Serve the unary gRPC calls it can take on the lean path (default true): the implementation called straight from
   * the HTTP/2 stream, answering exactly as Connect's handler does, at a fraction of its cost. False sends every
   * call through `connectNodeAdapter`.
   */
  readonly leanGrpc?: boolean;
  /**
   * The bootstrap for the xDS client the server creates (gRPC's JSON, as an object or text; default: from
   * `GRPC_XDS_BOOTSTRAP` / `GRPC_XDS_BOOTSTRAP_CONFIG`). It must have `server_listener_resource_name_template`.
   * Not with `client`.
   */
  readonly bootstrap?: BootstrapConfig | string;
  /** An xDS client to watch with (shared with other users; the server does not close it). Not with `bootstrap`. */
  readonly client?: XdsClient;
  /**
   * How long a drained connection (after a Listener change, a Listener deletion, or `close`) keeps its calls in
   * flight before it is closed by force. Default 10 minutes, as gRPC. Any length (Infinity: never by force).
   */
  readonly drainGraceMs?: number;
  /**
   * How long an accepted connection has to complete TLS and send the HTTP/2 connection preface before it is
   * closed. Default 20 s (gRPC's minimum connect timeout: a gRPC client has given up by then).
   */
  readonly handshakeTimeoutMs?: number;
  /**
   * How many accepted connections may be waiting for their TLS handshake or HTTP/2 connection preface at once; a
   * new one past it closes the oldest. Default 1,000. Infinity: no limit (then only `handshakeTimeoutMs` bounds them).
   */
  readonly maxPendingConnections?: number;
  /** Called on every change of the serving state, with the reason when not serving. Without it, changes are logged. */
  readonly onServingStatus?: (status: ServingStatus) => void;
  /** Credentials of filter chains without a `transport_socket`. Default plaintext. */
  readonly fallbackCredentials?: FallbackCredentials;
  /** Where the server (and the xDS client it creates) log. Default: nothing logged. */
  readonly logger?: Logger;
}

/** The TCP address a server listens on: an IP literal and a port (0 at `listen` picks a free one). */
export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

export interface XdsServer {
  /**
   * Binds `host:port` (an IP literal: the Listener name holds it) and watches the Listener named by the bootstrap's
   * template with the bound `ip:port`. Resolves once bound, serving or not: connections are accepted and closed
   * without a byte until the first good configuration. Rejects when the address cannot be bound (in use, say).
   */
  listen(address: ListenAddress): Promise<ListenAddress>;
  /** The bound address, once listening. */
  address(): ListenAddress | undefined;
  servingStatus(): ServingStatus;
  /** The Listener resource it watches, once listening. */
  readonly listenerResourceName: string | undefined;
  /**
   * Stops listening and watching, sends GOAWAY on every connection and closes them once their calls finish, by
   * force after `graceMs` (default 0: at once). Resolves when every connection is closed.
   */
  close(options?: { readonly graceMs?: number }): Promise<void>;
}

/** The largest request message a server takes unless `connectOptions.readMaxBytes` says otherwise: gRPC's 4 MiB. */
export const DEFAULT_READ_MAX_BYTES = 4 * 1024 * 1024;
