// Envoy's two text forms of a per-call ORCA report: `endpoint-load-metrics` ("native": `name:value` pairs
// separated by commas) and `endpoint-load-metrics-json` (the report in proto JSON).
import { create, fromJsonString } from "@bufbuild/protobuf";
import { type OrcaLoadReport, OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { OrcaParseError } from "./orca-error.js";
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

/**
 * Parses the native form, e.g. `cpu_utilization:0.7, named_metrics.foo:123`. The names Envoy accepts are the five
 * top-level fields and `named_metrics.<key>`; a name given twice, an unknown name, an empty entry or a value that
 * is not a finite decimal number throws OrcaParseError. An empty value is an empty report.
 */
export function parseOrcaNative(text: string): OrcaLoadReport {
  const report = create(OrcaLoadReportSchema);
  if (text.trim() === "") return report;
  const seen = new Set<string>();
  for (const rawEntry of text.split(",")) {
    const entry = rawEntry.trim();
    const colon = entry.indexOf(":");
    if (colon < 0) throw nativeError(`entry "${entry}" is not name:value`);
    const name = entry.slice(0, colon).trim();
    const valueText = entry.slice(colon + 1).trim();
    if (name === "") throw nativeError(`entry "${entry}" has an empty metric name`);
    if (seen.has(name)) throw nativeError(`metric ${name} appears more than once`);
    seen.add(name);
    if (!NUMBER.test(valueText)) throw nativeError(`metric ${name} has value "${valueText}", not a finite number`);
    const value = Number(valueText);
    if (!Number.isFinite(value)) throw nativeError(`metric ${name} has value "${valueText}", not a finite number`);
    const field = TOP_LEVEL.get(name);
    if (field !== undefined) {
      report[field] = value;
    } else if (name.startsWith(NAMED_PREFIX) && name.length > NAMED_PREFIX.length) {
      report.namedMetrics[name.slice(NAMED_PREFIX.length)] = value;
    } else {
      throw nativeError(`unsupported metric name ${name}`);
    }
  }
  return dropOutOfRange(report);
}

/** Parses the proto JSON form; unknown fields are ignored, as Envoy does. Throws OrcaParseError. */
export function parseOrcaJson(text: string): OrcaLoadReport {
  try {
    return dropOutOfRange(fromJsonString(OrcaLoadReportSchema, text, { ignoreUnknownFields: true }));
  } catch (error) {
    throw new OrcaParseError(
      `endpoint-load-metrics-json is not an OrcaLoadReport in proto JSON: ${error instanceof Error ? error.message : String(error)}`,
      "json",
      { cause: error },
    );
  }
}

function nativeError(detail: string): OrcaParseError {
  return new OrcaParseError(`endpoint-load-metrics: ${detail}`, "native");
}
