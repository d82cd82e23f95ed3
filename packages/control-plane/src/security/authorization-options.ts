import type { AuthorizeStream, IdentityOptions } from "./authorization.js";
import type { AuthorizationClass, CanRead } from "./authorization-read.js";
import type { CanReadClientStatus } from "./client-status-access.js";
import type { ServerTlsOptions } from "./tls-options.js";

/** The security options of `createManagementServer` (docs/security.md). */
export interface SecurityOptions {
  /**
   * Serve over TLS, and with a CA, mutual TLS (docs/security.md). Without it the server speaks cleartext HTTP/2,
   * meant for loopback: listening in cleartext on another address logs a warning.
   */
  readonly tls?: ServerTlsOptions;
  /** Bind node ids to client certificates: a stream whose node is not its certificate's is refused (PERMISSION_DENIED). */
  readonly identity?: IdentityOptions;
  /**
   * Decides, at the first request of each ADS and LRS stream, whether its peer (address, verified client
   * certificate) may be served as the node it claims; runs after the `identity` check. Synchronous.
   */
  readonly authorize?: AuthorizeStream;
  /**
   * Which resources each stream may read (docs/security.md#per-resource-authorization). A subscription naming a
   * resource its identity may not read gets a TP3 resource error with PERMISSION_DENIED instead, whether or not the
   * resource exists; a wildcard subscription does not see it. Asked again after `authorizationChanged()`.
   */
  readonly canRead?: CanRead;
  /**
   * Identities that `canRead` treats alike share one class, and streams of a class share the responses worked out
   * for them. Default: every client certificate and node is its own class.
   */
  readonly authorizationClass?: AuthorizationClass;
  /**
   * Which clients of a CSDS service served on this port (`routes`, e.g. `clientStatusRoutes(registry)` of
   * `@xdskit/csds`) a peer may read (docs/security.md#csds): each `ClientConfig` of an answer is kept only when this
   * returns true. Default: with `identity`, the configs whose node is the one the peer's certificate is bound to;
   * without `identity`, every config, to every peer that may connect.
   */
  readonly canReadClientStatus?: CanReadClientStatus;
}
