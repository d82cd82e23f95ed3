// The binary OrcaLoadReport decoder, on every call's path. A hand-written reader takes the shape real backends
// send (known fields with their own wire types, single-byte tags, ASCII map keys); anything else (unknown fields,
// the deprecated `rps`, other wire types, non-ASCII keys, truncation) goes to protobuf-es `fromBinary`, so both
// paths accept and reject exactly the same inputs (test/orca-bin-property.test.ts checks it on random bytes).
import { fromBinary } from "@bufbuild/protobuf";
import { type OrcaLoadReport, OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { OrcaParseError } from "./orca-error.js";
import { dropOutOfRange, isFraction, isMeasurement, isNonNegative } from "./orca-ranges.js";

const TYPE_NAME = "xds.data.orca.v3.OrcaLoadReport";

// Tag bytes (field number << 3 | wire type) of the fields the fast path reads.
const CPU = 0x09; // 1, fixed64
const MEM = 0x11; // 2, fixed64
const REQUEST_COST = 0x22; // 4, length-delimited
const UTILIZATION = 0x2a; // 5, length-delimited
const RPS_FRACTIONAL = 0x31; // 6, fixed64
const EPS = 0x39; // 7, fixed64
const NAMED_METRICS = 0x42; // 8, length-delimited
const APPLICATION = 0x49; // 9, fixed64
const ENTRY_KEY = 0x0a; // map entry 1, length-delimited
const ENTRY_VALUE = 0x11; // map entry 2, fixed64

// Doubles are read through a scratch buffer: no DataView per call. Float64Array uses the host's byte order, so on
// a big-endian host every input takes the slow path.
const scratch = new Float64Array(1);
const scratchBytes = new Uint8Array(scratch.buffer);
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Thrown inside the fast path to hand the input to the slow path. */
const FALLBACK = Symbol("fallback");

let pos = 0;

function readDouble(bytes: Uint8Array, at: number): number {
  if (at + 8 > bytes.length) throw FALLBACK;
  for (let i = 0; i < 8; i++) scratchBytes[i] = bytes[at + i] as number;
  return scratch[0] as number;
}

/** A varint up to 2^28, advancing `pos`; longer or truncated ones fall back. */
function readLength(bytes: Uint8Array): number {
  let result = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    if (pos >= bytes.length) throw FALLBACK;
    const byte = bytes[pos++] as number;
    result |= (byte & 0x7f) << shift;
    if (byte < 0x80) return result;
  }
  throw FALLBACK;
}

function readAsciiKey(bytes: Uint8Array, start: number, end: number): string {
  let key = "";
  for (let i = start; i < end; i++) {
    const c = bytes[i] as number;
    if (c >= 0x80) throw FALLBACK;
    key += String.fromCharCode(c);
  }
  return key;
}

/** Reads one map entry at `pos` into `map`; returns whether its value passed `valid`. */
function readEntry(bytes: Uint8Array, map: { [key: string]: number }, valid: (value: number) => boolean): boolean {
  const length = readLength(bytes);
  const end = pos + length;
  if (end > bytes.length) throw FALLBACK;
  let key = "";
  let value = 0;
  while (pos < end) {
    const tag = bytes[pos++];
    if (tag === ENTRY_KEY) {
      const keyLength = readLength(bytes);
      if (pos + keyLength > end) throw FALLBACK;
      key = readAsciiKey(bytes, pos, pos + keyLength);
      pos += keyLength;
    } else if (tag === ENTRY_VALUE) {
      if (pos + 8 > end) throw FALLBACK;
      value = readDouble(bytes, pos);
      pos += 8;
    } else {
      throw FALLBACK;
    }
  }
  map[key] = value;
  return valid(value);
}

function decodeFast(bytes: Uint8Array): OrcaLoadReport {
  let cpuUtilization = 0;
  let memUtilization = 0;
  let rpsFractional = 0;
  let eps = 0;
  let applicationUtilization = 0;
  const requestCost: { [key: string]: number } = {};
  const utilization: { [key: string]: number } = {};
  const namedMetrics: { [key: string]: number } = {};
  let mapsInRange = true;
  pos = 0;
  const length = bytes.length;
  while (pos < length) {
    const tag = bytes[pos++];
    switch (tag) {
      case CPU:
        cpuUtilization = readDouble(bytes, pos);
        pos += 8;
        break;
      case MEM:
        memUtilization = readDouble(bytes, pos);
        pos += 8;
        break;
      case RPS_FRACTIONAL:
        rpsFractional = readDouble(bytes, pos);
        pos += 8;
        break;
      case EPS:
        eps = readDouble(bytes, pos);
        pos += 8;
        break;
      case APPLICATION:
        applicationUtilization = readDouble(bytes, pos);
        pos += 8;
        break;
      case NAMED_METRICS:
        if (!readEntry(bytes, namedMetrics, isMeasurement)) mapsInRange = false;
        break;
      case UTILIZATION:
        if (!readEntry(bytes, utilization, isFraction)) mapsInRange = false;
        break;
      case REQUEST_COST:
        if (!readEntry(bytes, requestCost, isMeasurement)) mapsInRange = false;
        break;
      default:
        throw FALLBACK;
    }
  }
  const report: OrcaLoadReport = {
    $typeName: TYPE_NAME,
    cpuUtilization: isNonNegative(cpuUtilization) ? cpuUtilization : 0,
    memUtilization: isFraction(memUtilization) ? memUtilization : 0,
    rps: 0n,
    requestCost,
    utilization,
    rpsFractional: isNonNegative(rpsFractional) ? rpsFractional : 0,
    eps: isNonNegative(eps) ? eps : 0,
    namedMetrics,
    applicationUtilization: isNonNegative(applicationUtilization) ? applicationUtilization : 0,
  };
  // A later entry may have replaced an out-of-range value of the same key: filter the final maps.
  return mapsInRange ? report : dropOutOfRange(report);
}

/** The reference decoder: protobuf-es, then the A51 range filter. */
export function decodeOrcaLoadReportSlow(bytes: Uint8Array): OrcaLoadReport {
  let report: OrcaLoadReport;
  try {
    report = fromBinary(OrcaLoadReportSchema, bytes);
  } catch (error) {
    throw new OrcaParseError(
      `endpoint-load-metrics-bin is not a valid OrcaLoadReport: ${error instanceof Error ? error.message : String(error)}`,
      "bin",
      { cause: error },
    );
  }
  return dropOutOfRange(report);
}

/** The fast path alone: undefined when the input needs the reference decoder. */
export function decodeOrcaLoadReportFast(bytes: Uint8Array): OrcaLoadReport | undefined {
  if (!littleEndian) return undefined;
  try {
    return decodeFast(bytes);
  } catch (error) {
    if (error === FALLBACK) return undefined;
    throw error;
  }
}

/**
 * Decodes a serialized `xds.data.orca.v3.OrcaLoadReport` and drops the values outside A51's ranges. Throws
 * OrcaParseError when the bytes are not a valid message.
 */
export function decodeOrcaLoadReport(bytes: Uint8Array): OrcaLoadReport {
  return decodeOrcaLoadReportFast(bytes) ?? decodeOrcaLoadReportSlow(bytes);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Decodes the base64 text of an `endpoint-load-metrics-bin` trailer (padding optional, as gRPC sends it). A value
 * with a comma is two trailers joined by the HTTP layer: rejected as a duplicate.
 */
export function decodeOrcaBinaryTrailer(text: string): OrcaLoadReport {
  const value = text.trim();
  if (value.includes(",")) throw new OrcaParseError("endpoint-load-metrics-bin appears more than once", "bin");
  const unpadded = value.replace(/=+$/, "");
  if (!BASE64.test(value) || unpadded.length % 4 === 1 || (unpadded !== value && value.length % 4 !== 0)) {
    throw new OrcaParseError("endpoint-load-metrics-bin is not valid base64", "bin");
  }
  return decodeOrcaLoadReport(Buffer.from(value, "base64"));
}
