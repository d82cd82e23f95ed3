import type { Bootstrap } from "../bootstrap-types.js";
import type { TransportSocketView } from "../gen/envoy/config/core/v3/base_view.js";
import type { CertificateValidationContextView } from "../gen/envoy/extensions/transport_sockets/tls/v3/common_view.js";
import {
  type CommonTlsContextView,
  UpstreamTlsContextViewReader,
} from "../gen/envoy/extensions/transport_sockets/tls/v3/tls_view.js";
import { decodeExtension, extractExtension } from "./extension.js";
import { parseStringMatcher, type StringMatcher } from "./matchers.js";
import { EMPTY, type ValidationErrors } from "./validation.js";

/** A certificate provider instance of the bootstrap's `certificate_providers`, and the certificate it serves. */
export interface CertificateProviderInstance {
  readonly instanceName: string;
  readonly certificateName: string;
}

/** A29 client-side TLS (the Cluster's `UpstreamTlsContext`). */
export interface UpstreamTlsConfig {
  readonly caCertificates:
    | ({ readonly type: "certificate_provider" } & CertificateProviderInstance)
    | { readonly type: "system_root_certs" };
  /** Identity certificate for mTLS; absent for plain TLS. */
  readonly identityCertificate?: CertificateProviderInstance;
  readonly matchSubjectAltNames: readonly StringMatcher[];
  /** `sni` as sent (empty when unset). */
  readonly sni: string;
}

const UPSTREAM_TLS_CONTEXT = "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext";

function providerInstance(
  instance: { instanceName: string; certificateName: string },
  path: string,
  bootstrap: Bootstrap,
  errors: ValidationErrors,
): CertificateProviderInstance {
  if (!bootstrap.certificateProviders.has(instance.instanceName)) {
    errors.add(`${path}.instance_name`, `unrecognized certificate provider instance name: ${instance.instanceName}`);
  }
  return Object.freeze({ instanceName: instance.instanceName, certificateName: instance.certificateName });
}

interface ValidationParts {
  ca?: UpstreamTlsConfig["caCertificates"];
  sans: readonly StringMatcher[];
}

function parseValidationContext(
  proto: CertificateValidationContextView,
  path: string,
  bootstrap: Bootstrap,
  errors: ValidationErrors,
): ValidationParts {
  const sans: StringMatcher[] = [];
  for (let i = 0; i < proto.matchSubjectAltNames.length; i++) {
    const matcher = parseStringMatcher(proto.matchSubjectAltNames[i], `${path}.match_subject_alt_names[${i}]`, errors);
    if (matcher !== undefined) sans.push(matcher);
  }
  let ca: UpstreamTlsConfig["caCertificates"] | undefined;
  if (proto.caCertificateProviderInstance !== undefined) {
    const instance = providerInstance(
      proto.caCertificateProviderInstance,
      `${path}.ca_certificate_provider_instance`,
      bootstrap,
      errors,
    );
    ca = Object.freeze({ type: "certificate_provider", ...instance });
  } else if (proto.systemRootCerts !== undefined) {
    ca = Object.freeze({ type: "system_root_certs" });
  }
  if (proto.verifyCertificateSpki.length > 0) errors.add(`${path}.verify_certificate_spki`, "feature unsupported");
  if (proto.verifyCertificateHash.length > 0) errors.add(`${path}.verify_certificate_hash`, "feature unsupported");
  if (proto.requireSignedCertificateTimestamp === true) {
    errors.add(`${path}.require_signed_certificate_timestamp`, "feature unsupported");
  }
  if (proto.crl !== undefined) errors.add(`${path}.crl`, "feature unsupported");
  if (proto.customValidatorConfig !== undefined) errors.add(`${path}.custom_validator_config`, "feature unsupported");
  return ca === undefined ? { sans: Object.freeze(sans) } : { ca, sans: Object.freeze(sans) };
}

function parseCommonTlsContext(
  proto: CommonTlsContextView,
  path: string,
  bootstrap: Bootstrap,
  errors: ValidationErrors,
): { validation: ValidationParts; identity?: CertificateProviderInstance } {
  let validation: ValidationParts = { sans: EMPTY };
  const spec = proto.validationContextType;
  if (spec.case === "combinedValidationContext") {
    const combinedPath = `${path}.combined_validation_context`;
    const combined = spec.value;
    if (combined.defaultValidationContext !== undefined) {
      validation = parseValidationContext(
        combined.defaultValidationContext,
        `${combinedPath}.default_validation_context`,
        bootstrap,
        errors,
      );
    }
    const legacy = combined.validationContextCertificateProviderInstance;
    if (validation.ca?.type !== "certificate_provider" && legacy !== undefined) {
      const instance = providerInstance(
        legacy,
        `${combinedPath}.validation_context_certificate_provider_instance`,
        bootstrap,
        errors,
      );
      validation = { ca: Object.freeze({ type: "certificate_provider", ...instance }), sans: validation.sans };
    }
  } else if (spec.case === "validationContext") {
    validation = parseValidationContext(spec.value, `${path}.validation_context`, bootstrap, errors);
  } else if (spec.case === "validationContextSdsSecretConfig") {
    errors.add(`${path}.validation_context_sds_secret_config`, "feature unsupported");
  }
  let identity: CertificateProviderInstance | undefined;
  if (proto.tlsCertificateProviderInstance !== undefined) {
    identity = providerInstance(
      proto.tlsCertificateProviderInstance,
      `${path}.tls_certificate_provider_instance`,
      bootstrap,
      errors,
    );
  } else if (proto.tlsCertificateCertificateProviderInstance !== undefined) {
    identity = providerInstance(
      proto.tlsCertificateCertificateProviderInstance,
      `${path}.tls_certificate_certificate_provider_instance`,
      bootstrap,
      errors,
    );
  } else {
    if (proto.tlsCertificates.length > 0) errors.add(`${path}.tls_certificates`, "feature unsupported");
    if (proto.tlsCertificateSdsSecretConfigs.length > 0) {
      errors.add(`${path}.tls_certificate_sds_secret_configs`, "feature unsupported");
    }
  }
  if (proto.tlsParams !== undefined) errors.add(`${path}.tls_params`, "feature unsupported");
  if (proto.customHandshaker !== undefined) errors.add(`${path}.custom_handshaker`, "feature unsupported");
  return identity === undefined ? { validation } : { validation, identity };
}

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
      ? { validation: { sans: EMPTY } as ValidationParts }
      : parseCommonTlsContext(context.commonTlsContext, commonPath, bootstrap, errors);
  const ca = common.validation.ca;
  if (ca === undefined) {
    errors.add(commonPath, "no CA certs configured");
    return undefined;
  }
  return Object.freeze({
    caCertificates: ca,
    ...("identity" in common && common.identity !== undefined ? { identityCertificate: common.identity } : {}),
    matchSubjectAltNames: common.validation.sans,
    sni: context.sni,
  });
}
