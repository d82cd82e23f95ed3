// A29: the `CommonTlsContext` shared by a Cluster's UpstreamTlsContext and a filter chain's DownstreamTlsContext, read
// as gRPC reads it. Certificates come only from the bootstrap's certificate provider instances (current and legacy
// fields); every other way of giving certificates, and every check gRPC cannot make, is refused rather than ignored,
// so a configuration never silently loses a check it asked for (docs/decisions.md#a29-tls-fields).
import type { Bootstrap } from "../bootstrap/bootstrap-types.js";
import type { CertificateValidationContextView } from "../gen/envoy/extensions/transport_sockets/tls/v3/common_view.js";
import type { CommonTlsContextView } from "../gen/envoy/extensions/transport_sockets/tls/v3/tls_view.js";
import { parseStringMatcher, type StringMatcher } from "./matchers.js";
import { EMPTY, keptList, type ValidationErrors } from "./validation.js";

/** A certificate provider instance of the bootstrap's `certificate_providers`, and the certificate it serves. */
export interface CertificateProviderInstance {
  readonly instanceName: string;
  /** As sent (`file_watcher` serves one certificate and ignores it). */
  readonly certificateName: string;
}

/** Where a validation context takes its roots from. */
export type CaSource =
  | ({ readonly type: "certificate_provider" } & CertificateProviderInstance)
  | { readonly type: "system_root_certs" };

/** A CommonTlsContext, validated: the roots and SAN matchers of its validation context, and the identity. */
export interface CommonTlsParts {
  readonly ca?: CaSource;
  readonly sans: readonly StringMatcher[];
  readonly identity?: CertificateProviderInstance;
}

const UNSUPPORTED = "feature unsupported";

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

function caProvider(
  instance: { instanceName: string; certificateName: string },
  path: string,
  bootstrap: Bootstrap,
  errors: ValidationErrors,
): CaSource {
  return Object.freeze({ type: "certificate_provider", ...providerInstance(instance, path, bootstrap, errors) });
}

const SYSTEM_ROOTS: CaSource = Object.freeze({ type: "system_root_certs" });

function parseValidationContext(
  proto: CertificateValidationContextView,
  path: string,
  bootstrap: Bootstrap,
  errors: ValidationErrors,
): { ca?: CaSource; sans: readonly StringMatcher[] } {
  const sans: StringMatcher[] = [];
  for (let i = 0; i < proto.matchSubjectAltNames.length; i++) {
    const matcher = parseStringMatcher(proto.matchSubjectAltNames[i], `${path}.match_subject_alt_names[${i}]`, errors);
    if (matcher !== undefined) sans.push(matcher);
  }
  if (proto.matchTypedSubjectAltNames.length > 0 && proto.matchSubjectAltNames.length === 0) {
    errors.add(`${path}.match_typed_subject_alt_names`, `${UNSUPPORTED} (use match_subject_alt_names)`);
  }
  let ca: CaSource | undefined;
  if (proto.caCertificateProviderInstance !== undefined) {
    ca = caProvider(proto.caCertificateProviderInstance, `${path}.ca_certificate_provider_instance`, bootstrap, errors);
  } else if (proto.systemRootCerts !== undefined) {
    ca = SYSTEM_ROOTS;
  } else if (proto.trustedCa !== undefined) {
    errors.add(`${path}.trusted_ca`, `${UNSUPPORTED} (use ca_certificate_provider_instance)`);
  }
  if (proto.verifyCertificateSpki.length > 0) errors.add(`${path}.verify_certificate_spki`, UNSUPPORTED);
  if (proto.verifyCertificateHash.length > 0) errors.add(`${path}.verify_certificate_hash`, UNSUPPORTED);
  if (proto.requireSignedCertificateTimestamp === true) {
    errors.add(`${path}.require_signed_certificate_timestamp`, UNSUPPORTED);
  }
  if (proto.crl !== undefined) errors.add(`${path}.crl`, UNSUPPORTED);
  if (proto.customValidatorConfig !== undefined) errors.add(`${path}.custom_validator_config`, UNSUPPORTED);
  const frozen = keptList(sans);
  return ca === undefined ? { sans: frozen } : { ca, sans: frozen };
}

function parseValidation(
  proto: CommonTlsContextView,
  path: string,
  bootstrap: Bootstrap,
  errors: ValidationErrors,
): { ca?: CaSource; sans: readonly StringMatcher[] } {
  const spec = proto.validationContextType;
  switch (spec.case) {
    case "validationContext":
      return parseValidationContext(spec.value, `${path}.validation_context`, bootstrap, errors);
    case "combinedValidationContext": {
      const combinedPath = `${path}.combined_validation_context`;
      const combined = spec.value;
      let validation: { ca?: CaSource; sans: readonly StringMatcher[] } = { sans: EMPTY };
      if (combined.defaultValidationContext !== undefined) {
        const defaultPath = `${combinedPath}.default_validation_context`;
        validation = parseValidationContext(combined.defaultValidationContext, defaultPath, bootstrap, errors);
      }
      const legacy = combined.validationContextCertificateProviderInstance;
      if (validation.ca?.type !== "certificate_provider" && legacy !== undefined) {
        const legacyPath = `${combinedPath}.validation_context_certificate_provider_instance`;
        validation = { ca: caProvider(legacy, legacyPath, bootstrap, errors), sans: validation.sans };
      }
      return validation;
    }
    case "validationContextCertificateProviderInstance":
      return {
        ca: caProvider(spec.value, `${path}.validation_context_certificate_provider_instance`, bootstrap, errors),
        sans: EMPTY,
      };
    case "validationContextSdsSecretConfig":
      errors.add(`${path}.validation_context_sds_secret_config`, UNSUPPORTED);
      return { sans: EMPTY };
    case "validationContextCertificateProvider":
      errors.add(`${path}.validation_context_certificate_provider`, `${UNSUPPORTED} (use a provider instance)`);
      return { sans: EMPTY };
    default:
      return { sans: EMPTY };
  }
}

/** Validates a CommonTlsContext; `path` names it. */
export function parseCommonTlsContext(
  proto: CommonTlsContextView,
  path: string,
  bootstrap: Bootstrap,
  errors: ValidationErrors,
): CommonTlsParts {
  const validation = parseValidation(proto, path, bootstrap, errors);
  let identity: CertificateProviderInstance | undefined;
  if (proto.tlsCertificateProviderInstance !== undefined) {
    const instancePath = `${path}.tls_certificate_provider_instance`;
    identity = providerInstance(proto.tlsCertificateProviderInstance, instancePath, bootstrap, errors);
  } else if (proto.tlsCertificateCertificateProviderInstance !== undefined) {
    const instancePath = `${path}.tls_certificate_certificate_provider_instance`;
    identity = providerInstance(proto.tlsCertificateCertificateProviderInstance, instancePath, bootstrap, errors);
  } else {
    if (proto.tlsCertificates.length > 0) errors.add(`${path}.tls_certificates`, UNSUPPORTED);
    if (proto.tlsCertificateSdsSecretConfigs.length > 0) {
      errors.add(`${path}.tls_certificate_sds_secret_configs`, UNSUPPORTED);
    }
    if (proto.tlsCertificateCertificateProvider !== undefined) {
      errors.add(`${path}.tls_certificate_certificate_provider`, `${UNSUPPORTED} (use a provider instance)`);
    }
  }
  if (proto.tlsParams !== undefined) errors.add(`${path}.tls_params`, UNSUPPORTED);
  if (proto.customHandshaker !== undefined) errors.add(`${path}.custom_handshaker`, UNSUPPORTED);
  return {
    sans: validation.sans,
    ...(validation.ca === undefined ? {} : { ca: validation.ca }),
    ...(identity === undefined ? {} : { identity }),
  };
}
