// The binary OrcaLoadReport decoder, on every call's path. A hand-written reader takes the shape real backends
// send (known fields with their own wire types, single-byte tags, ASCII map keys); anything else (unknown fields,
// the deprecated `rps`, other wire types, non-ASCII keys, truncation) goes to protobuf-es `fromBinary`, so both
// paths accept and reject exactly the same inputs (orca-bin.test.ts checks it on random and damaged inputs).
import { fromBinary } from "@bufbuild/protobuf";
import { type OrcaLoadReport, OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { NamedMetricsMap } from "./named-metrics-map.js";
import { OrcaParseError, type OrcaSource } from "./orca-error.js";
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

// Doubles are read through a scratch buffer (two 32-bit halves in, one double out): no DataView per call. Typed
// arrays use the host's byte order, so on a big-endian host every input takes the slow path.
const scratch = new Float64Array(1);
const scratchHalves = new Int32Array(scratch.buffer);
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Thrown inside the fast path to hand the input to the slow path. */
const FALLBACK = Symbol("fallback");

function readDouble(b: Uint8Array, at: number): number {
  scratchHalves[0] =
    (b[at] as number) | ((b[at + 1] as number) << 8) | ((b[at + 2] as number) << 16) | ((b[at + 3] as number) << 24);
  scratchHalves[1] =
    (b[at + 4] as number) |
    ((b[at + 5] as number) << 8) |
    ((b[at + 6] as number) << 16) |
    ((b[at + 7] as number) << 24);
  return scratch[0] as number;
}

// Metric names repeat call after call: each distinct ASCII key is decoded once, then found again by its bytes
// (FNV-1a hash, then a byte comparison), which allocates nothing. A hash collision or a full cache just decodes.
const KEY_CACHE_LIMIT = 1024;
const keyCache = new Map<number, { readonly bytes: Uint8Array; readonly key: string }>();

function readAsciiKey(bytes: Uint8Array, start: number, end: number): string {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) {
    const c = bytes[i] as number;
    if (c >= 0x80) throw FALLBACK;
    hash = Math.imul(hash ^ c, 0x01000193);
  }
  // Kept within a small integer, so the map key is never a boxed number.
  const cached = keyCache.get(hash & 0x3fffffff);
  if (cached !== undefined && cached.bytes.length === end - start) {
    let same = true;
    for (let i = start, j = 0; i < end; i++, j++) {
      if (cached.bytes[j] !== bytes[i]) {
        same = false;
        break;
      }
    }
    if (same) return cached.key;
  }
  const copy = bytes.slice(start, end);
  const key = String.fromCharCode.apply(null, copy as unknown as number[]);
  if (cached === undefined && keyCache.size < KEY_CACHE_LIMIT) keyCache.set(hash & 0x3fffffff, { bytes: copy, key });
  return key;
}

/** The key and value of the entry `readEntry` read last (the value in a typed array: no boxed double). */
let entryKey = "";
const entryValue = new Float64Array(1);

/**
 * Reads the map entry whose length byte is at `pos` into `entryKey` and `entryValue`; returns the position after
 * it. Lengths and tags are single bytes here (keys up to 116 bytes); anything longer falls back.
 */
function readEntry(bytes: Uint8Array, pos: number, length: number): number {
  if (pos >= length) throw FALLBACK;
  const entryLength = bytes[pos++] as number;
  const end = pos + entryLength;
  if (entryLength >= 0x80 || end > length) throw FALLBACK;
  let key = "";
  let value = 0;
  while (pos < end) {
    const tag = bytes[pos++];
    if (tag === ENTRY_KEY && pos < end) {
      const keyLength = bytes[pos++] as number;
      if (keyLength >= 0x80 || pos + keyLength > end) throw FALLBACK;
      key = readAsciiKey(bytes, pos, pos + keyLength);
      pos += keyLength;
    } else if (tag === ENTRY_VALUE && pos + 8 <= end) {
      value = readDouble(bytes, pos);
      pos += 8;
    } else {
      throw FALLBACK;
    }
  }
  entryKey = key;
  entryValue[0] = value;
  return pos;
}

function decodeFast(bytes: Uint8Array, length: number): OrcaLoadReport {
  let cpuUtilization = 0;
  let memUtilization = 0;
  let rpsFractional = 0;
  let eps = 0;
  let applicationUtilization = 0;
  const requestCost: { [key: string]: number } = {};
  const utilization: { [key: string]: number } = {};
  const namedMetrics = new NamedMetricsMap();
  const namedEntries: (string | number)[] = [];
  let namedDuplicates = false;
  let mapsInRange = true;
  let pos = 0;
  while (pos < length) {
    const tag = bytes[pos++];
    if (tag === NAMED_METRICS) {
      pos = readEntry(bytes, pos, length);
      const value = entryValue[0] as number;
      for (let i = 0; i < namedEntries.length; i += 2) if (namedEntries[i] === entryKey) namedDuplicates = true;
      namedMetrics[entryKey] = value;
      namedEntries.push(entryKey, value);
      if (!isMeasurement(value)) mapsInRange = false;
      continue;
    }
    if (tag === UTILIZATION) {
      pos = readEntry(bytes, pos, length);
      utilization[entryKey] = entryValue[0] as number;
      if (!isFraction(entryValue[0] as number)) mapsInRange = false;
      continue;
    }
    if (tag === REQUEST_COST) {
      pos = readEntry(bytes, pos, length);
      requestCost[entryKey] = entryValue[0] as number;
      if (!isMeasurement(entryValue[0] as number)) mapsInRange = false;
      continue;
    }
    if (pos + 8 > length) throw FALLBACK;
    const value = readDouble(bytes, pos);
    pos += 8;
    if (tag === CPU) cpuUtilization = value;
    else if (tag === MEM) memUtilization = value;
    else if (tag === APPLICATION) applicationUtilization = value;
    else if (tag === RPS_FRACTIONAL) rpsFractional = value;
    else if (tag === EPS) eps = value;
    else throw FALLBACK;
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
  if (!mapsInRange) dropOutOfRange(report);
  if (mapsInRange && !namedDuplicates) NamedMetricsMap.attach(namedMetrics, namedEntries);
  return report;
}

const BIN: OrcaSource = { header: "endpoint-load-metrics-bin", format: "bin" };

/** The reference decoder: protobuf-es, then the A51 range filter. */
export function decodeOrcaLoadReportSlow(bytes: Uint8Array, source: OrcaSource = BIN): OrcaLoadReport {
  let report: OrcaLoadReport;
  try {
    report = fromBinary(OrcaLoadReportSchema, bytes);
  } catch (error) {
    throw new OrcaParseError(
      `${source.header} is not a valid OrcaLoadReport: ${error instanceof Error ? error.message : String(error)}`,
      source.format,
      { cause: error },
    );
  }
  return dropOutOfRange(report);
}

/** The fast path alone: undefined when the input needs the reference decoder. */
export function decodeOrcaLoadReportFast(bytes: Uint8Array): OrcaLoadReport | undefined {
  if (!littleEndian) return undefined;
  try {
    return decodeFast(bytes, bytes.length);
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

const EQUALS = 0x3d;
/** Decoded trailers land here: the fast decoder copies out what it keeps, so the buffer is reused. */
let base64Scratch = Buffer.allocUnsafe(512);

/**
 * Decodes the base64 text of an `endpoint-load-metrics-bin` trailer (padding optional, as gRPC sends it; the URL-safe
 * alphabet is read too, as grpc-js reads it). A value with a comma is two trailers joined by the HTTP layer:
 * rejected as a duplicate.
 */
export function decodeOrcaBinaryTrailer(text: string): OrcaLoadReport {
  return decodeBase64OrcaReport(text, BIN);
}

/** `decodeOrcaBinaryTrailer` for a value read from `source` (its errors name it). */
export function decodeBase64OrcaReport(text: string, source: OrcaSource): OrcaLoadReport {
  const value = text.trim();
  let end = value.length;
  if (end > 0 && value.charCodeAt(end - 1) === EQUALS) end--;
  if (end > 0 && value.charCodeAt(end - 1) === EQUALS) end--;
  const size = (end >> 2) * 3 + ((end & 3) === 0 ? 0 : (end & 3) - 1);
  if (base64Scratch.length < size) base64Scratch = Buffer.allocUnsafe(size * 2);
  // Node's decoder skips characters outside the alphabet: fewer bytes than the length promises means there were some.
  const written = base64Scratch.write(value, 0, "base64");
  if (written !== size || (end & 3) === 1 || (end < value.length && (value.length & 3) !== 0)) {
    if (value.includes(",")) throw new OrcaParseError(`${source.header} appears more than once`, source.format);
    throw new OrcaParseError(`${source.header} is not valid base64`, source.format);
  }
  if (littleEndian) {
    try {
      return decodeFast(base64Scratch, written);
    } catch (error) {
      if (error !== FALLBACK) throw error;
    }
  }
  // A copy: the reference decoder keeps views of its input (unknown fields), and the scratch is reused.
  return decodeOrcaLoadReportSlow(new Uint8Array(base64Scratch.subarray(0, written)), source);
}
