/**
 * The experimental switches, resolved once when a client is created: an explicit option wins over the environment,
 * which wins over the default (every switch defaults to on; docs/decisions.md#switch-defaults).
 */
export interface XdsFeatures {
  /** A88 data error handling and TP3 `resource_errors` (`GRPC_EXPERIMENTAL_XDS_DATA_ERROR_HANDLING`). */
  readonly dataErrorHandling: boolean;
  /** A67 dynamic parameters (`GRPC_EXPERIMENTAL_XDS_DYNAMIC_PARAMETERS`). */
  readonly dynamicParameters: boolean;
  /** A85 ORCA to LRS propagation (`GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION`). */
  readonly orcaLrsPropagation: boolean;
  /** A71 fallback across servers (`GRPC_EXPERIMENTAL_XDS_FALLBACK`). */
  readonly fallback: boolean;
  /** A47 federation: xdstp names and authorities (`GRPC_EXPERIMENTAL_XDS_FEDERATION`). */
  readonly federation: boolean;
}

const environmentNames: Record<keyof XdsFeatures, string> = {
  dataErrorHandling: "GRPC_EXPERIMENTAL_XDS_DATA_ERROR_HANDLING",
  dynamicParameters: "GRPC_EXPERIMENTAL_XDS_DYNAMIC_PARAMETERS",
  orcaLrsPropagation: "GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION",
  fallback: "GRPC_EXPERIMENTAL_XDS_FALLBACK",
  federation: "GRPC_EXPERIMENTAL_XDS_FEDERATION",
};

/** gRPC's reading of a boolean environment variable: "true"/"false" in any case; anything else is unset. */
function parseFlag(value: string | undefined): boolean | undefined {
  const v = value?.trim().toLowerCase();
  if (v === "true") return true;
  if (v === "false") return false;
  return undefined;
}

export function resolveFeatures(
  overrides: Partial<XdsFeatures> = {},
  env: Readonly<Record<string, string | undefined>> = {},
): XdsFeatures {
  const pick = (key: keyof XdsFeatures): boolean => overrides[key] ?? parseFlag(env[environmentNames[key]]) ?? true;
  return Object.freeze({
    dataErrorHandling: pick("dataErrorHandling"),
    dynamicParameters: pick("dynamicParameters"),
    orcaLrsPropagation: pick("orcaLrsPropagation"),
    fallback: pick("fallback"),
    federation: pick("federation"),
  });
}
