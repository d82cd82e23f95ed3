// One per-call ORCA report from a call's trailers, whichever of the three trailers carries it
// (docs/orca-lrs.md#parser-precedence: exactly one may be present).
import type { OrcaLoadReport } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { decodeOrcaBinaryTrailer, decodeOrcaLoadReport } from "./orca-bin.js";
import { OrcaParseError, type OrcaTrailerFormat } from "./orca-error.js";
import { parseOrcaJson, parseOrcaNative } from "./orca-text.js";

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

/** Reads the ORCA report of one call; undefined when the call carried none. */
export function readOrcaReport(values: TrailerValues): OrcaReadResult | undefined {
  const bin = values(ORCA_BIN_TRAILER);
  const native = values(ORCA_NATIVE_TRAILER);
  const json = values(ORCA_JSON_TRAILER);
  const present = (bin.length > 0 ? 1 : 0) + (native.length > 0 ? 1 : 0) + (json.length > 0 ? 1 : 0);
  if (present === 0) return undefined;
  try {
    if (present > 1) {
      throw new OrcaParseError(
        `more than one ORCA trailer: ${[bin.length > 0 ? ORCA_BIN_TRAILER : "", native.length > 0 ? ORCA_NATIVE_TRAILER : "", json.length > 0 ? ORCA_JSON_TRAILER : ""].filter(Boolean).join(", ")}`,
      );
    }
    if (bin.length > 0) return { ok: true, report: decodeBin(bin), format: "bin" };
    if (json.length > 0) {
      if (json.length > 1) throw new OrcaParseError(`${ORCA_JSON_TRAILER} appears more than once`, "json");
      return { ok: true, report: parseOrcaJson(text(json[0])), format: "json" };
    }
    // Envoy reads the entries of every native trailer line together; a name repeated across lines is a duplicate.
    return { ok: true, report: parseOrcaNative(native.map(text).join(",")), format: "native" };
  } catch (error) {
    if (error instanceof OrcaParseError) return { ok: false, error };
    throw error;
  }
}

/** Reads the ORCA report from fetch-style `Headers` (Connect's trailers). */
export function readOrcaReportFromHeaders(trailers: Headers): OrcaReadResult | undefined {
  // Fast exit for the common case of a call without ORCA: three lookups, no allocation.
  const bin = trailers.get(ORCA_BIN_TRAILER);
  const native = trailers.get(ORCA_NATIVE_TRAILER);
  const json = trailers.get(ORCA_JSON_TRAILER);
  if (bin === null && native === null && json === null) return undefined;
  if (bin !== null && native === null && json === null) {
    try {
      return { ok: true, report: decodeOrcaBinaryTrailer(bin), format: "bin" };
    } catch (error) {
      if (error instanceof OrcaParseError) return { ok: false, error };
      throw error;
    }
  }
  return readOrcaReport((name) => {
    const value = trailers.get(name);
    return value === null ? [] : [value];
  });
}

function decodeBin(values: readonly (string | Uint8Array)[]): OrcaLoadReport {
  if (values.length > 1) throw new OrcaParseError(`${ORCA_BIN_TRAILER} appears more than once`, "bin");
  const value = values[0] as string | Uint8Array;
  return typeof value === "string" ? decodeOrcaBinaryTrailer(value) : decodeOrcaLoadReport(value);
}

function text(value: string | Uint8Array | undefined): string {
  return typeof value === "string" ? value : Buffer.from(value ?? []).toString("utf8");
}
