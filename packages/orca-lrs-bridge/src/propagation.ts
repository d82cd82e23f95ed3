// Which ORCA metrics go into a cluster's load reports (A85 `lrs_report_endpoint_metrics`), and the
// GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION switch that brings back A64 (docs/orca-lrs.md#switch-default).

/**
 * What a cluster's CDS update says about ORCA to LRS propagation:
 * - `undefined` or a selection with nothing selected: the field is unset, nothing is propagated (A85);
 * - `{ mode: "a64" }`: the client has A85 switched off: every named metric, unprefixed, no utilizations;
 * - a selection: the top-level utilizations chosen, and `named_metrics.*` (`namedMetrics: "all"`, or
 *   `allNamedMetrics: true` as `@xdskit/xds-client` 0.x spells it) or the keys of `named_metrics.<key>` entries.
 */
export type OrcaPropagationConfig = { readonly mode: "a64" } | OrcaPropagationSelection;

export interface OrcaPropagationSelection {
  readonly mode?: "a85";
  readonly cpuUtilization?: boolean;
  readonly memUtilization?: boolean;
  readonly applicationUtilization?: boolean;
  /** `"all"` for `named_metrics.*`; otherwise the keys of `named_metrics.<key>` entries (a Set or an array). */
  readonly namedMetrics?: "all" | Iterable<string>;
  /** `named_metrics.*`; when true it wins over `namedMetrics`. */
  readonly allNamedMetrics?: boolean;
}

/** The normalized form a locality-stats handle filters with; `key` identifies it (part of the handle's key). */
export interface Propagation {
  readonly legacy: boolean;
  readonly cpuUtilization: boolean;
  readonly memUtilization: boolean;
  readonly applicationUtilization: boolean;
  readonly allNamedMetrics: boolean;
  /** Sorted, without duplicates; empty when `allNamedMetrics`. */
  readonly namedMetrics: readonly string[];
  readonly key: string;
}

const NAMED_PREFIX = "named_metrics.";

const LEGACY_PROPAGATION: Propagation = Object.freeze({
  legacy: true,
  cpuUtilization: false,
  memUtilization: false,
  applicationUtilization: false,
  allNamedMetrics: false,
  namedMetrics: Object.freeze([]),
  key: "a64",
});

/**
 * The propagation a handle applies. With the switch off every config reads as A64; with it on, the config decides.
 */
export function resolvePropagation(config: OrcaPropagationConfig | undefined, switchOn: boolean): Propagation {
  if (!switchOn || (config !== undefined && config.mode === "a64")) return LEGACY_PROPAGATION;
  const selection = (config ?? {}) as OrcaPropagationSelection;
  const cpuUtilization = selection.cpuUtilization === true;
  const memUtilization = selection.memUtilization === true;
  const applicationUtilization = selection.applicationUtilization === true;
  const allNamedMetrics = selection.allNamedMetrics === true || selection.namedMetrics === "all";
  const keys =
    allNamedMetrics || selection.namedMetrics === undefined || selection.namedMetrics === "all"
      ? []
      : [...new Set(selection.namedMetrics)].filter((k) => typeof k === "string" && k !== "").sort();
  const flags = `${cpuUtilization ? "c" : ""}${memUtilization ? "m" : ""}${applicationUtilization ? "a" : ""}`;
  return Object.freeze({
    legacy: false,
    cpuUtilization,
    memUtilization,
    applicationUtilization,
    allNamedMetrics,
    namedMetrics: Object.freeze(keys),
    key: `a85:${flags}:${allNamedMetrics ? "*" : JSON.stringify(keys)}`,
  });
}

/**
 * Reads the raw `lrs_report_endpoint_metrics` strings of a Cluster (A85): the three utilizations,
 * `named_metrics.*` and `named_metrics.<key>`; any other string, and `named_metrics.` with an empty key, is ignored
 * (never an error). An empty list is the unset field.
 */
export function parseLrsReportEndpointMetrics(entries: readonly string[]): OrcaPropagationSelection {
  let cpuUtilization = false;
  let memUtilization = false;
  let applicationUtilization = false;
  let all = false;
  const keys = new Set<string>();
  for (const entry of entries) {
    if (entry === "cpu_utilization") cpuUtilization = true;
    else if (entry === "mem_utilization") memUtilization = true;
    else if (entry === "application_utilization") applicationUtilization = true;
    else if (entry.startsWith(NAMED_PREFIX)) {
      const key = entry.slice(NAMED_PREFIX.length);
      if (key === "*") all = true;
      else if (key !== "") keys.add(key);
    }
  }
  return { cpuUtilization, memUtilization, applicationUtilization, namedMetrics: all ? "all" : keys };
}

export const ORCA_LRS_PROPAGATION_ENV = "GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION";

/**
 * The A85 switch, read once when a store or client is created: an explicit option wins, then the environment
 * variable ("true"/"false" in any case; anything else counts as unset), then the default, on.
 */
export function resolveOrcaLrsPropagation(
  explicit: boolean | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): boolean {
  if (explicit !== undefined) return explicit;
  const value = env[ORCA_LRS_PROPAGATION_ENV]?.trim().toLowerCase();
  if (value === "false") return false;
  return true;
}
