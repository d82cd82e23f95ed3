// The default transport's reading of an ADS response message (docs/architecture.md#the-response-reader): SotW as
// `SotwResponseRanges` or `SotwResponseBytes`, delta as `DeltaResponseRanges` or `DeltaResponseBytes` (each resource
// the bytes it arrived as).
// A message encoded as servers encode one is read here, without protobuf-es's reflection; any other is read by
// protobuf-es, which gives the same message (test/fuzz/response-reader.test.ts) or fails as Connect's transport did
// (INTERNAL, `parse binary: …`).
import { type DescMessage, fromBinary, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type DeltaResponseBytes, DeltaResponseBytesSchema } from "@xdskit/protos/xdskit/client/v1/delta_response_pb";
import { type SotwResponseBytes, SotwResponseBytesSchema } from "@xdskit/protos/xdskit/client/v1/sotw_response_pb";
import { errorMessage } from "../shared/xds-error.js";
import type { ResponseEntries } from "../wire/decode-memo.js";
import { asciiText, forEachPlainField } from "../wire/plain-fields.js";
import type { DeltaResponseRanges, SotwResponseRanges } from "./transport-types.js";

/** protobuf-es's reading, failing as Connect's transport fails a message it cannot parse. */
function slowRead<Desc extends DescMessage>(schema: Desc, bytes: Uint8Array): MessageShape<Desc> {
  try {
    return fromBinary(schema, bytes);
  } catch (error) {
    throw new ConnectError(`parse binary: ${errorMessage(error)}`, Code.Internal);
  }
}

/** Field tags (number << 3 | 2, length-delimited) of the fields the plain readers take. */
const TAG_1 = 0x0a;
const TAG_2 = 0x12;
const TAG_4 = 0x22;
const TAG_5 = 0x2a;
const TAG_6 = 0x32;

/**
 * A SotW response: as `SotwResponseRanges` when plain (its resources as ranges of the message), else as protobuf-es
 * reads it.
 */
export function readSotwResponse(bytes: Uint8Array): SotwResponseRanges | SotwResponseBytes {
  return readPlainSotwResponse(bytes) ?? slowRead(SotwResponseBytesSchema, bytes);
}

/** A delta response: as `DeltaResponseRanges` when plain, else as protobuf-es reads it. */
export function readDeltaResponse(bytes: Uint8Array): DeltaResponseRanges | DeltaResponseBytes {
  return readPlainDeltaResponse(bytes) ?? slowRead(DeltaResponseBytesSchema, bytes);
}

/**
 * Where the resources of the message being read start and end (one message is read at a time), grown as needed: as
 * large as the largest response's count, 8 bytes per resource, for the life of the process.
 */
let scratchStarts = new Int32Array(1024);
let scratchEnds = new Int32Array(1024);

/** Records the `index`th resource's range. */
function addRange(index: number, start: number, end: number): void {
  if (index === scratchStarts.length) {
    const starts = new Int32Array(index * 2);
    const ends = new Int32Array(index * 2);
    starts.set(scratchStarts);
    ends.set(scratchEnds);
    scratchStarts = starts;
    scratchEnds = ends;
  }
  scratchStarts[index] = start;
  scratchEnds[index] = end;
}

/** The `count` ranges recorded, over `memory`. */
function rangesOf(memory: Uint8Array, count: number): ResponseEntries {
  return { memory, starts: scratchStarts.slice(0, count), ends: scratchEnds.slice(0, count) };
}

/**
 * A SotW response holding only `version_info` (1), `resources` (2), `type_url` (4) and `nonce` (5), its strings
 * ASCII; undefined for any other.
 */
export function readPlainSotwResponse(bytes: Uint8Array): SotwResponseRanges | undefined {
  let versionInfo = "";
  let typeUrl = "";
  let nonce = "";
  let count = 0;
  const plain = forEachPlainField(bytes, (tag, start, end) => {
    if (tag === TAG_2) {
      addRange(count++, start, end);
      return true;
    }
    const text = tag === TAG_1 || tag === TAG_4 || tag === TAG_5 ? asciiText(bytes, start, end) : undefined;
    if (text === undefined) return false;
    // A string field given twice keeps the last, as protobuf-es does.
    if (tag === TAG_1) versionInfo = text;
    else if (tag === TAG_4) typeUrl = text;
    else nonce = text;
    return true;
  });
  if (!plain) return undefined;
  return {
    $typeName: "xdskit.client.v1.SotwResponseRanges",
    versionInfo,
    typeUrl,
    nonce,
    entries: rangesOf(bytes, count),
  };
}

/**
 * A delta response holding only `system_version_info` (1), `resources` (2), `type_url` (4), `nonce` (5) and
 * `removed_resources` (6), its strings ASCII; undefined for any other.
 */
export function readPlainDeltaResponse(bytes: Uint8Array): DeltaResponseRanges | undefined {
  let systemVersionInfo = "";
  let typeUrl = "";
  let nonce = "";
  let count = 0;
  const removedResources: string[] = [];
  const plain = forEachPlainField(bytes, (tag, start, end) => {
    if (tag === TAG_2) {
      addRange(count++, start, end);
      return true;
    }
    const text =
      tag === TAG_1 || tag === TAG_4 || tag === TAG_5 || tag === TAG_6 ? asciiText(bytes, start, end) : undefined;
    if (text === undefined) return false;
    if (tag === TAG_1) systemVersionInfo = text;
    else if (tag === TAG_4) typeUrl = text;
    else if (tag === TAG_5) nonce = text;
    else removedResources.push(text);
    return true;
  });
  if (!plain) return undefined;
  return {
    $typeName: "xdskit.client.v1.DeltaResponseRanges",
    systemVersionInfo,
    typeUrl,
    nonce,
    removedResources,
    entries: rangesOf(bytes, count),
  };
}
