// A29 server TLS: a server filter chain's `transport_socket` holding a DownstreamTlsContext, read as gRPC servers read
// it: the identity must come from a certificate provider instance; client certificates are verified against a
// provider instance's roots (system roots and SAN matchers are client-side only); `require_client_certificate` needs
// such roots; `require_sni` and OCSP policies other than lenient stapling are refused.
import type { Bootstrap } from "../bootstrap/bootstrap-types.js";
import type { TransportSocketView } from "../gen/envoy/config/core/v3/base_view.js";
import { DownstreamTlsContextViewReader } from "../gen/envoy/extensions/transport_sockets/tls/v3/tls_view.js";
import { type CommonTlsParts, parseCommonTlsContext } from "./common-tls.js";
import { decodeExtension, extractExtension } from "./extension.js";
import type { DownstreamTlsConfig } from "./listener-types.js";
import { EMPTY, type ValidationErrors } from "./validation.js";

const DOWNSTREAM_TLS_CONTEXT = "envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext";
/** `DownstreamTlsContext.OcspStaplePolicy.LENIENT_STAPLING`. */
const LENIENT_STAPLING = 0;

/** A filter chain's `transport_socket`; `path` names it (`filter_chains[i].transport_socket`). */
export function parseDownstreamTls(
  socket: TransportSocketView,
  path: string,
  bootstrap: Bootstrap,
  errors: ValidationErrors,
): DownstreamTlsConfig | undefined {
  const typedConfig = socket.configType.case === "typedConfig" ? socket.configType.value : undefined;
  const extension = extractExtension(typedConfig, `${path}.typed_config`, errors);
  if (extension === undefined) return undefined;
  if (extension.type !== DOWNSTREAM_TLS_CONTEXT) {
    errors.add(`${path}.typed_config.type_url`, "unsupported transport socket type");
    return undefined;
  }
  const context = decodeExtension(extension, DownstreamTlsContextViewReader);
  if (context === undefined) {
    errors.add(extension.path, "can't decode DownstreamTlsContext");
    return undefined;
  }
  const before = errors.count;
  const commonPath = `${extension.path}.common_tls_context`;
  let common: CommonTlsParts = { sans: EMPTY };
  if (context.commonTlsContext !== undefined) {
    common = parseCommonTlsContext(context.commonTlsContext, commonPath, bootstrap, errors);
    if (common.ca?.type === "system_root_certs") errors.add(commonPath, "system_root_certs not supported on servers");
    if (common.sans.length > 0) errors.add(commonPath, "match_subject_alt_names not supported on servers");
  }
  if (common.identity === undefined) {
    errors.add(commonPath, "TLS configuration provided but no tls_certificate_provider_instance found");
  }
  const requireClientCertificate = context.requireClientCertificate === true;
  if (requireClientCertificate && common.ca?.type !== "certificate_provider") {
    errors.add(
      `${extension.path}.require_client_certificate`,
      "client certificate required but no certificate provider instance specified for validation",
    );
  }
  if (context.requireSni === true) errors.add(`${extension.path}.require_sni`, "field unsupported");
  if (context.ocspStaplePolicy !== LENIENT_STAPLING) {
    errors.add(`${extension.path}.ocsp_staple_policy`, "value must be LENIENT_STAPLING");
  }
  if (errors.count !== before || common.identity === undefined) return undefined;
  const ca = common.ca?.type === "certificate_provider" ? common.ca : undefined;
  return Object.freeze({
    identityCertificate: common.identity,
    ...(ca === undefined
      ? {}
      : { caCertificates: Object.freeze({ instanceName: ca.instanceName, certificateName: ca.certificateName }) }),
    requireClientCertificate,
  });
}
