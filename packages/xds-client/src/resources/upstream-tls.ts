// A29 client TLS: a Cluster's `transport_socket` holding an UpstreamTlsContext. Its roots come from a certificate
// provider instance or the system roots; an identity (mTLS) from a provider instance; the server's certificate must
// carry a SAN matching one of `matchSubjectAltNames` when there are any.
import type { Bootstrap } from "../bootstrap/bootstrap-types.js";
import type { TransportSocketView } from "../gen/envoy/config/core/v3/base_view.js";
import { UpstreamTlsContextViewReader } from "../gen/envoy/extensions/transport_sockets/tls/v3/tls_view.js";
import { type CaSource, type CertificateProviderInstance, parseCommonTlsContext } from "./common-tls.js";
import { decodeExtension, extractExtension } from "./extension.js";
import type { StringMatcher } from "./matchers.js";
import { EMPTY, type ValidationErrors } from "./validation.js";

export type { CertificateProviderInstance } from "./common-tls.js";

/** A29 client-side TLS (the Cluster's `UpstreamTlsContext`). */
export interface UpstreamTlsConfig {
  readonly caCertificates: CaSource;
  /** Identity certificate for mTLS; absent for plain TLS. */
  readonly identityCertificate?: CertificateProviderInstance;
  /**
   * The server certificate must have a SAN (DNS, URI, email or IP, as text) one of these matches; empty: any
   * certificate the roots verify is accepted.
   */
  readonly matchSubjectAltNames: readonly StringMatcher[];
  /** `sni` as sent (empty when unset). */
  readonly sni: string;
}

const UPSTREAM_TLS_CONTEXT = "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext";

/** The Cluster's `transport_socket` (A29): an UpstreamTlsContext with a CA from a certificate provider or the system. */
export function parseUpstreamTls(
  socket: TransportSocketView,
  bootstrap: Bootstrap,
  errors: ValidationErrors,
): UpstreamTlsConfig | undefined {
  const typedConfig = socket.configType.case === "typedConfig" ? socket.configType.value : undefined;
  const extension = extractExtension(typedConfig, "transport_socket.typed_config", errors);
  if (extension === undefined) return undefined;
  if (extension.type !== UPSTREAM_TLS_CONTEXT) {
    errors.add("transport_socket.typed_config.type_url", "unsupported transport socket type");
    return undefined;
  }
  const context = decodeExtension(extension, UpstreamTlsContextViewReader);
  if (context === undefined) {
    errors.add(extension.path, "can't decode UpstreamTlsContext");
    return undefined;
  }
  const commonPath = `${extension.path}.common_tls_context`;
  const common =
    context.commonTlsContext === undefined
      ? { sans: EMPTY }
      : parseCommonTlsContext(context.commonTlsContext, commonPath, bootstrap, errors);
  if (common.ca === undefined) {
    errors.add(commonPath, "no CA certs configured");
    return undefined;
  }
  return Object.freeze({
    caCertificates: common.ca,
    ...("identity" in common && common.identity !== undefined ? { identityCertificate: common.identity } : {}),
    matchSubjectAltNames: common.sans,
    sni: context.sni,
  });
}
