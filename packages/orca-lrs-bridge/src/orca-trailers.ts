// One per-call ORCA report from a call's trailers (docs/orca-lrs.md#which-header), read as today's Envoy reads
// them: `endpoint-load-metrics-bin` first, whatever else is there; else ONE `endpoint-load-metrics` whose value names
// its form (`BIN `, `TEXT `, `JSON `). The earlier Envoy forms are the fallback: an `endpoint-load-metrics` value
// without a prefix is a `name:value` list, and `endpoint-load-metrics-json` is read when neither header is present.
import type { OrcaLoadReport } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { decodeBase64OrcaReport, decodeOrcaBinaryTrailer, decodeOrcaLoadReport } from "./orca-bin.js";
import { OrcaParseError, type OrcaSource, type OrcaTrailerFormat } from "./orca-error.js";
import { JSON_SOURCE, NATIVE_SOURCE, readNameValues, readProtoJson } from "./orca-text.js";

export const ORCA_BIN_TRAILER = "endpoint-load-metrics-bin";
export const ORCA_NATIVE_TRAILER = "endpoint-load-metrics";
export const ORCA_JSON_TRAILER = "endpoint-load-metrics-json";

/** The outcome of reading a call's trailers that carried an ORCA report. */
export type OrcaReadResult =
  | { readonly ok: true; readonly report: OrcaLoadReport; readonly format: OrcaTrailerFormat }
  | { readonly ok: false; readonly error: OrcaParseError };

/**
 * The trailers of one call, as each transport holds them: every value of a name (text, or bytes for the `-bin`
 * trailer when the transport already decoded base64), or an empty list when absent.
 */
export type TrailerValues = (name: string) => readonly (string | Uint8Array)[];

const PREFIXED: Readonly<Record<string, OrcaSource>> = {
  BIN: { header: `${ORCA_NATIVE_TRAILER} (BIN)`, format: "prefixed-bin" },
  TEXT: { header: `${ORCA_NATIVE_TRAILER} (TEXT)`, format: "prefixed-text" },
  JSON: { header: `${ORCA_NATIVE_TRAILER} (JSON)`, format: "prefixed-json" },
};
/**
 * A leading word in capitals, then a space or the end (the HTTP layer trims a trailing space): a format prefix.
 * An unprefixed `name:value` list cannot start so: its names are lower case.
 */
const PREFIX = /^([A-Z][A-Z0-9_]*)(?: |$)/;

/** Reads the ORCA report of one call; undefined when the call carried none. */
export function readOrcaReport(values: TrailerValues): OrcaReadResult | undefined {
  const bin = values(ORCA_BIN_TRAILER);
  if (bin.length > 0) return attempt("bin", () => decodeBin(bin));
  const metrics = values(ORCA_NATIVE_TRAILER);
  if (metrics.length > 0) return readEndpointLoadMetrics(metrics.map(text));
  const json = values(ORCA_JSON_TRAILER);
  if (json.length === 0) return undefined;
  return attempt("json", () => {
    if (json.length > 1) throw new OrcaParseError(`${ORCA_JSON_TRAILER} appears more than once`, "json");
    return readProtoJson(text(json[0]), JSON_SOURCE);
  });
}

/** Reads the ORCA report from fetch-style `Headers` (Connect's trailers, repeated values joined by `, `). */
export function readOrcaReportFromHeaders(trailers: Headers): OrcaReadResult | undefined {
  const bin = trailers.get(ORCA_BIN_TRAILER);
  if (bin !== null) {
    // gRPC backends' form, on every such call: no closure.
    try {
      return { ok: true, report: decodeOrcaBinaryTrailer(bin), format: "bin" };
    } catch (error) {
      if (error instanceof OrcaParseError) return { ok: false, error };
      throw error;
    }
  }
  const metrics = trailers.get(ORCA_NATIVE_TRAILER);
  if (metrics !== null) return readEndpointLoadMetrics([metrics]);
  const json = trailers.get(ORCA_JSON_TRAILER);
  if (json === null) return undefined;
  return attempt("json", () => readProtoJson(json, JSON_SOURCE));
}

/**
 * The `endpoint-load-metrics` values of a call. Prefixed, there must be one (a second one has no defined meaning;
 * joined by the HTTP layer, it shows as a list entry that starts with a prefix); unprefixed lines are read together
 * as one list, as Envoy's earlier parser did.
 */
function readEndpointLoadMetrics(values: readonly string[]): OrcaReadResult {
  const first = (values[0] as string).trim();
  const prefix = PREFIX.exec(first)?.[1];
  if (prefix === undefined) {
    return attempt("native", () => {
      if (values.some((value) => PREFIX.test(value.trim()))) throw repeated("prefixed");
      return readNameValues(values.join(","), NATIVE_SOURCE);
    });
  }
  const source = PREFIXED[prefix];
  if (source === undefined) {
    return {
      ok: false,
      error: new OrcaParseError(
        `${ORCA_NATIVE_TRAILER}: unsupported ORCA header format "${prefix}" (BIN, TEXT and JSON are defined)`,
      ),
    };
  }
  const body = first.slice(prefix.length).trim();
  return attempt(source.format, () => {
    if (values.length > 1) throw repeated(source.format);
    if (source.format === "prefixed-text") {
      if (body.split(",").some((entry) => PREFIX.test(entry.trim()))) throw repeated(source.format);
      return readNameValues(body, source);
    }
    if (source.format === "prefixed-json") return readProtoJson(body, source);
    // Envoy refuses a BIN value that is empty or decodes to nothing (unlike gRPC's -bin header, where no bytes is
    // an all-zero report).
    if (body.replace(/=+$/, "") === "") throw new OrcaParseError(`${source.header} is empty`, source.format);
    return decodeBase64OrcaReport(body, source);
  });
}

function repeated(format: OrcaTrailerFormat | "prefixed"): OrcaParseError {
  return new OrcaParseError(
    `${ORCA_NATIVE_TRAILER} appears more than once with a format prefix`,
    format === "prefixed" ? "native" : format,
  );
}

function attempt(format: OrcaTrailerFormat, read: () => OrcaLoadReport): OrcaReadResult {
  try {
    return { ok: true, report: read(), format };
  } catch (error) {
    if (error instanceof OrcaParseError) return { ok: false, error };
    throw error;
  }
}

function decodeBin(values: readonly (string | Uint8Array)[]): OrcaLoadReport {
  if (values.length > 1) throw new OrcaParseError(`${ORCA_BIN_TRAILER} appears more than once`, "bin");
  const value = values[0] as string | Uint8Array;
  return typeof value === "string" ? decodeOrcaBinaryTrailer(value) : decodeOrcaLoadReport(value);
}

function text(value: string | Uint8Array | undefined): string {
  return typeof value === "string" ? value : Buffer.from(value ?? []).toString("utf8");
}
