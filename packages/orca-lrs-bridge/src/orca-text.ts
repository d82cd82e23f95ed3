// Envoy's two text forms of a per-call ORCA report: a `name:value` list separated by commas (today after `TEXT ` in
// `endpoint-load-metrics`, earlier unprefixed there: "native") and proto JSON (today after `JSON `, earlier in
// `endpoint-load-metrics-json`). docs/orca-lrs.md#which-header.
import { create, fromJsonString } from "@bufbuild/protobuf";
import { type OrcaLoadReport, OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { OrcaParseError, type OrcaSource } from "./orca-error.js";
import { dropOutOfRange } from "./orca-ranges.js";

const NAMED_PREFIX = "named_metrics.";
/** A decimal number: sign, digits with an optional fraction, optional exponent. No NaN, no infinity, no hex. */
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

type TopLevel = "cpuUtilization" | "memUtilization" | "applicationUtilization" | "rpsFractional" | "eps";
const TOP_LEVEL: ReadonlyMap<string, TopLevel> = new Map([
  ["cpu_utilization", "cpuUtilization"],
  ["mem_utilization", "memUtilization"],
  ["application_utilization", "applicationUtilization"],
  ["rps_fractional", "rpsFractional"],
  ["eps", "eps"],
]);

/** The earlier Envoy forms, as errors name them. */
export const NATIVE_SOURCE: OrcaSource = { header: "endpoint-load-metrics", format: "native" };
export const JSON_SOURCE: OrcaSource = { header: "endpoint-load-metrics-json", format: "json" };

/**
 * Parses the `name:value` list, e.g. `cpu_utilization:0.7, named_metrics.foo:123`. The names Envoy accepts are the
 * five top-level fields and `named_metrics.<key>` (not `utilization.` nor `request_cost.`); a name given twice, an
 * unknown name, an entry without a value or a value that is not a finite decimal number throws OrcaParseError.
 * Empty entries (`a:1,,b:2`, a trailing comma) are skipped and an empty list is an empty report, as Envoy splits
 * header lists.
 */
export function parseOrcaNative(text: string): OrcaLoadReport {
  return readNameValues(text, NATIVE_SOURCE);
}

/** Parses the proto JSON form; unknown fields are ignored, as Envoy does. Throws OrcaParseError. */
export function parseOrcaJson(text: string): OrcaLoadReport {
  return readProtoJson(text, JSON_SOURCE);
}

/** `parseOrcaNative` of a value read from `source` (its errors name it). */
export function readNameValues(text: string, source: OrcaSource): OrcaLoadReport {
  const report = create(OrcaLoadReportSchema);
  const seen = new Set<string>();
  const fail = (detail: string) => new OrcaParseError(`${source.header}: ${detail}`, source.format);
  for (const rawEntry of text.split(",")) {
    const entry = rawEntry.trim();
    if (entry === "") continue;
    const colon = entry.indexOf(":");
    if (colon < 0) throw fail(`entry "${entry}" is not name:value`);
    const name = entry.slice(0, colon).trim();
    const valueText = entry.slice(colon + 1).trim();
    if (name === "") throw fail(`entry "${entry}" has an empty metric name`);
    if (seen.has(name)) throw fail(`metric ${name} appears more than once`);
    seen.add(name);
    if (!NUMBER.test(valueText)) throw fail(`metric ${name} has value "${valueText}", not a finite number`);
    const value = Number(valueText);
    if (!Number.isFinite(value)) throw fail(`metric ${name} has value "${valueText}", not a finite number`);
    const field = TOP_LEVEL.get(name);
    if (field !== undefined) {
      report[field] = value;
    } else if (name.startsWith(NAMED_PREFIX) && name.length > NAMED_PREFIX.length) {
      report.namedMetrics[name.slice(NAMED_PREFIX.length)] = value;
    } else {
      throw fail(`unsupported metric name ${name}`);
    }
  }
  return dropOutOfRange(report);
}

/** `parseOrcaJson` of a value read from `source` (its errors name it). */
export function readProtoJson(text: string, source: OrcaSource): OrcaLoadReport {
  try {
    return dropOutOfRange(fromJsonString(OrcaLoadReportSchema, text, { ignoreUnknownFields: true }));
  } catch (error) {
    throw new OrcaParseError(
      `${source.header} is not an OrcaLoadReport in proto JSON: ${error instanceof Error ? error.message : String(error)}`,
      source.format,
      { cause: error },
    );
  }
}
