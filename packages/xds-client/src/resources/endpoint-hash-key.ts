// A76's endpoint hash key, `LbEndpoint.metadata.filter_metadata["envoy.lb"].hash_key` as a string, read from the
// wire without building the metadata. protobuf-es reads every filter's Struct as JSON, which costs more than the rest
// of the endpoint together (metadata-heavy EDS, as a service mesh sends it, decoded three to four times slower), and
// gRPC reads one string of it. The generated LbEndpoint view calls `readEndpointHashKey` for its metadata field
// (views.json `derived`); the slow path and the tests read the same value with `hashKeyFromMetadata` from
// protobuf-es's message. The tests prove both agree (test/resources/endpoint-hash-key.test.ts, test/fuzz).
//
// One pass reads the metadata as `fromBinary` reads it (the same errors, the same end): its other fields and each
// filter's Struct through walkField, its map entries here with `fromBinary`'s rules (field 1 is the key, field 2 the
// value, the last of each, whatever their wire types; any other tag is read alone; a missing value is the empty
// message; a later entry with the same key replaces an earlier one). Only the `envoy.lb` Struct is read a second
// time, from bytes now known to be valid: its last `hash_key` entry, whose Value counts when the last member of its
// oneof is `string_value` (protobuf-es's JSON has any other as null, a number, a boolean, an object or an array).
// The metadata field sent twice is merged: a later `envoy.lb` entry replaces the earlier, and without one the earlier
// key stays.
import type { DescMessage } from "@bufbuild/protobuf";
import { type BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { ListValueSchema, StructSchema, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { Metadata } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { MetadataSchema } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { readTag } from "./view-runtime.js";
import { enterMessage, walkField } from "./wire-walk.js";

const ENVOY_LB = "envoy.lb";
const HASH_KEY = "hash_key";
const FILTER_METADATA = MetadataSchema.field.filterMetadata;
/** Value.string_value and Value.struct_value. */
const STRING_VALUE = 3;
const STRUCT_VALUE = 5;
/** The depth of the second pass's walks: the first pass checked the real depths, so none may fail here. */
const CHECKED = 1;

/**
 * Reads LbEndpoint's metadata field (its tag just read, the LbEndpoint nested `depth` deep) and returns the
 * endpoint's hash key: this metadata's when it has an `envoy.lb` entry, else `current` (the key of the field sent
 * earlier, or "").
 */
export function readEndpointHashKey(
  reader: BinaryReader,
  _desc: DescMessage,
  _fieldNo: number,
  _wireType: WireType,
  depth: number,
  current: string,
): string {
  // A known message field is read as a message whatever its wire type.
  const end = enterMessage(reader, MetadataSchema, depth + 1);
  let key = current;
  while (reader.pos < end) {
    const tag = readTag(reader);
    const fieldNo = tag >>> 3;
    const wireType = tag & 7;
    if (fieldNo !== FILTER_METADATA.number) {
      walkField(reader, MetadataSchema, fieldNo, wireType, depth + 1);
      continue;
    }
    const entryEnd = reader.uint32() + reader.pos;
    let lb = false;
    let value = -1;
    while (reader.pos < entryEnd) {
      const entryField = readTag(reader) >>> 3;
      if (entryField === 1) {
        lb = reader.string(FILTER_METADATA.utf8Validation) === ENVOY_LB;
      } else if (entryField === 2) {
        value = reader.pos;
        // The entry's Struct, one deeper than the metadata (walked as Value.struct_value's Struct is).
        walkField(reader, ValueSchema, STRUCT_VALUE, WireType.LengthDelimited, depth + 1);
      }
    }
    if (lb) key = value < 0 ? "" : atPosition(reader, value, structHashKey);
  }
  return key;
}

/** A Struct (length prefix first, valid): the value of its last `hash_key` field if it is a string, else "". */
function structHashKey(reader: BinaryReader): string {
  const end = reader.uint32() + reader.pos;
  let key = "";
  while (reader.pos < end) {
    const tag = readTag(reader);
    const fieldNo = tag >>> 3;
    const wireType = tag & 7;
    if (fieldNo !== 1) {
      walkField(reader, StructSchema, fieldNo, wireType, CHECKED);
      continue;
    }
    const entryEnd = reader.uint32() + reader.pos;
    let wanted = false;
    let value = -1;
    while (reader.pos < entryEnd) {
      const entryField = readTag(reader) >>> 3;
      if (entryField === 1) {
        wanted = reader.string() === HASH_KEY;
      } else if (entryField === 2) {
        value = reader.pos;
        // ListValue.values holds a Value: walkField walks it.
        walkField(reader, ListValueSchema, 1, WireType.LengthDelimited, CHECKED);
      }
    }
    if (wanted) key = value < 0 ? "" : atPosition(reader, value, stringValue);
  }
  return key;
}

/** A Value (length prefix first, valid): its string when the last member of its oneof is `string_value`, else "". */
function stringValue(reader: BinaryReader): string {
  const end = reader.uint32() + reader.pos;
  let value = "";
  while (reader.pos < end) {
    const tag = readTag(reader);
    const fieldNo = tag >>> 3;
    const wireType = tag & 7;
    if (fieldNo === STRING_VALUE) {
      value = reader.string();
      continue;
    }
    // Another member of the oneof replaces the string; an unknown field leaves it.
    if (fieldNo >= 1 && fieldNo <= 6) value = "";
    walkField(reader, ValueSchema, fieldNo, wireType, CHECKED);
  }
  return value;
}

/** Runs `read` at `position`, then puts the reader back where it was. */
function atPosition<T>(reader: BinaryReader, position: number, read: (reader: BinaryReader) => T): T {
  const saved = reader.pos;
  reader.pos = position;
  try {
    return read(reader);
  } finally {
    reader.pos = saved;
  }
}

/** The same key from protobuf-es's message (the slow path, and what the tests hold the wire reader to). */
export function hashKeyFromMetadata(metadata: Metadata | undefined): string {
  const value = metadata?.filterMetadata[ENVOY_LB]?.[HASH_KEY];
  return typeof value === "string" ? value : "";
}
