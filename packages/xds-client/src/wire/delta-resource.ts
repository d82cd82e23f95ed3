// Delta, the resources of a response read by the client (docs/architecture.md#the-delta-envelope): the default
// transport reads a delta response as `DeltaResponseRanges` (or `DeltaResponseBytes`), each resource the bytes of its
// encoded `Resource`, and the client reads each one here. A `Resource` encoded as servers encode one (its `version`,
// its `resource`, an `Any` of the response's type, and its `name`, each at most once, the strings ASCII) is read
// without protobuf-es, to the message protobuf-es reads from the same bytes; any other encoding is read by protobuf-es.
import { fromBinary } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { type Resource, ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { type ExpectedTypeUrls, plainAny, plainAnyValue, UnreadableResponseError } from "./any-reader.js";
import { isAscii, latin1Slice, nextPlainField, plainField } from "./plain-fields.js";

/**
 * Where `readPlainResourceFields` found the fields of a plain `Resource`: `RESOURCE_FIELDS` numbers from its offset,
 * each a start or an end in the bytes read, -1 for a field that is absent.
 */
export const RESOURCE_FIELDS = 6;
export const VERSION_START = 0;
export const VERSION_END = 1;
export const NAME_START = 2;
export const NAME_END = 3;
/** The value of its `Any` (its type URL, one of those expected, is in `plainAny` after the read). */
export const VALUE_START = 4;
export const VALUE_END = 5;

/**
 * Reads the `Resource` that is `bytes[start, end)` when its encoding is plain: fields 1 (version), 2 (resource, a
 * plain Any of an expected type) and 3 (name), each length-delimited, at most once, in any order, lengths below 2^28,
 * the strings ASCII, nothing else. Writes where its fields are into `into[at, at + RESOURCE_FIELDS)`; false for
 * anything else (left to protobuf-es). Nothing is allocated.
 */
export function readPlainResourceFields(
  bytes: Uint8Array,
  start: number,
  end: number,
  expected: ExpectedTypeUrls,
  into: Int32Array,
  at: number,
): boolean {
  let versionStart = -1;
  let versionEnd = -1;
  let nameStart = -1;
  let nameEnd = -1;
  let valueStart = -1;
  let valueEnd = -1;
  let pos = start;
  while (pos < end) {
    if (!nextPlainField(bytes, pos, end)) return false;
    const { tag, start: from, end: to } = plainField;
    if (tag === 0x0a && versionStart < 0) {
      if (!isAscii(bytes, from, to)) return false;
      versionStart = from;
      versionEnd = to;
    } else if (tag === 0x12 && valueStart < 0) {
      valueStart = plainAnyValue(bytes, from, to, expected);
      if (valueStart < 0) return false;
      valueEnd = to;
    } else if (tag === 0x1a && nameStart < 0) {
      if (!isAscii(bytes, from, to)) return false;
      nameStart = from;
      nameEnd = to;
    } else return false;
    pos = to;
  }
  into[at + VERSION_START] = versionStart;
  into[at + VERSION_END] = versionEnd;
  into[at + NAME_START] = nameStart;
  into[at + NAME_END] = nameEnd;
  into[at + VALUE_START] = valueStart;
  into[at + VALUE_END] = valueEnd;
  return true;
}

/** A field's text from the ranges `readPlainResourceFields` wrote, "" when absent. */
function textAt(bytes: Uint8Array, fields: Int32Array, start: number): string {
  const from = fields[start]!;
  return from < 0 ? "" : latin1Slice.call(bytes, from, fields[start + 1]!);
}

/**
 * The `Resource` whose plain encoding `readPlainResourceFields` read into `fields[at, …)`, as protobuf-es reads it
 * (its keys in protobuf-es's order, each shape made whole at once). `typeUrl` is its Any's.
 */
export function plainResourceAt(bytes: Uint8Array, fields: Int32Array, at: number, typeUrl: string): Resource {
  const $typeName = "envoy.service.discovery.v3.Resource";
  const name = textAt(bytes, fields, at + NAME_START);
  const version = textAt(bytes, fields, at + VERSION_START);
  const valueStart = fields[at + VALUE_START]!;
  if (valueStart < 0) return { $typeName, name, aliases: [], version } as Resource;
  const value = bytes.subarray(valueStart, fields[at + VALUE_END]!);
  const resource: Any = { $typeName: "google.protobuf.Any", typeUrl, value };
  return { $typeName, name, aliases: [], version, resource } as Resource;
}

/** Where a single read puts the fields. */
const single = new Int32Array(RESOURCE_FIELDS);

/** The plain encoding (`readPlainResourceFields`) read to a `Resource`; undefined for anything else. */
export function readPlainResource(bytes: Uint8Array, expected: ExpectedTypeUrls): Resource | undefined {
  if (!readPlainResourceFields(bytes, 0, bytes.length, expected, single, 0)) return undefined;
  return plainResourceAt(bytes, single, 0, plainAny.typeUrl);
}

/**
 * An entry of a delta response's `resources` as the `Resource` it encodes, read as protobuf-es reads it inside the
 * envelope (the same checks and recursion budget, the envelope one level up). A failure fails the whole response, as
 * it did when the transport read the envelope with its `Resource`s. `expected` holds the response's type URL.
 */
export function readResource(bytes: Uint8Array, expected: ExpectedTypeUrls): Resource {
  return readPlainResource(bytes, expected) ?? slowReadResource(bytes);
}

/** protobuf-es's reading of a `Resource`, failing the response when it fails. */
export function slowReadResource(bytes: Uint8Array): Resource {
  try {
    return fromBinary(ResourceSchema, bytes, { recursionLimit: 99 });
  } catch (error) {
    throw new UnreadableResponseError(error);
  }
}
