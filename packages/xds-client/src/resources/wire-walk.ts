import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";

/*
 * Reading a message the way `fromBinary` of @bufbuild/protobuf reads it, keeping nothing. A generated wire view
 * (src/gen, view-runtime.ts) calls `walkField` for every field it does not keep, so that it accepts and rejects
 * exactly the bytes `fromBinary` accepts and rejects (proved by the property tests in test/fuzz). The rules of
 * `fromBinary` followed here:
 * - a known field is read as its declared type, whatever the wire type of its tag;
 * - a nested message is read while the position is below its declared end: a field that crosses the end is read
 *   whole, and the enclosing message carries on from there (only reading past the buffer fails);
 * - strings are checked as UTF-8 when the field asks for it (every proto3 string does);
 * - messages nest at most RECURSION_LIMIT deep, the top-level message counting as 1; an unknown field is skipped
 *   with the budget left, which bounds nested groups;
 * - a map entry reads field 1 as the key and field 2 as the value, whatever the wire type; any other tag in an
 *   entry is read and nothing after it is consumed.
 */

/** `fromBinary`'s default recursion limit. */
export const RECURSION_LIMIT = 100;

const fieldsByNumber = new WeakMap<DescMessage, Map<number, DescField>>();

function fieldOf(desc: DescMessage, fieldNo: number): DescField | undefined {
  let fields = fieldsByNumber.get(desc);
  if (fields === undefined) {
    fields = new Map(desc.fields.map((field) => [field.number, field]));
    fieldsByNumber.set(desc, fields);
  }
  return fields.get(fieldNo);
}

function walkScalar(reader: BinaryReader, type: ScalarType, utf8Validation: boolean): void {
  switch (type) {
    case ScalarType.STRING:
      reader.string(utf8Validation);
      return;
    case ScalarType.BYTES:
      reader.bytes();
      return;
    case ScalarType.DOUBLE:
      reader.double();
      return;
    case ScalarType.FLOAT:
      reader.float();
      return;
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      reader.fixed32();
      return;
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      reader.fixed64();
      return;
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.BOOL:
      reader.uint64();
      return;
    default:
      // INT32, UINT32, SINT32 (and enums)
      reader.uint32();
  }
}

/**
 * Reads the body of a message of type `desc` nested `depth` deep. `delimitedFieldNo` is set for a group-encoded
 * message (it ends at its END_GROUP tag); otherwise the length prefix is read first.
 */
function walkMessage(reader: BinaryReader, desc: DescMessage, depth: number, delimitedFieldNo?: number): void {
  const end = delimitedFieldNo === undefined ? reader.uint32() + reader.pos : reader.len;
  checkDepth(desc, depth);
  let fieldNo = 0;
  let wireType: WireType = WireType.Varint;
  while (reader.pos < end) {
    [fieldNo, wireType] = reader.tag();
    if (delimitedFieldNo !== undefined && wireType === WireType.EndGroup) break;
    walkField(reader, desc, fieldNo, wireType, depth);
  }
  if (delimitedFieldNo !== undefined && (wireType !== WireType.EndGroup || fieldNo !== delimitedFieldNo)) {
    throw new Error("invalid end group tag");
  }
}

function checkDepth(desc: DescMessage, depth: number): void {
  if (depth > RECURSION_LIMIT) {
    throw new Error(`cannot decode ${desc} from binary: maximum recursion depth of ${RECURSION_LIMIT} reached`);
  }
}

/**
 * Starts reading a length-prefixed message of type `desc` nested `depth` deep, as `fromBinary` starts one (the
 * length, then the depth check, with its error); returns where it ends. For a hand-written reader of a field.
 */
export function enterMessage(reader: BinaryReader, desc: DescMessage, depth: number): number {
  const end = reader.uint32() + reader.pos;
  checkDepth(desc, depth);
  return end;
}

function walkNested(reader: BinaryReader, field: DescField & { message: DescMessage }, depth: number): void {
  const delimited = field.fieldKind !== "map" && field.delimitedEncoding;
  walkMessage(reader, field.message, depth + 1, delimited ? field.number : undefined);
}

/** Reads (or skips, when unknown) the field whose tag was just read, in a message of type `desc` at `depth`. */
export function walkField(
  reader: BinaryReader,
  desc: DescMessage,
  fieldNo: number,
  wireType: WireType,
  depth: number,
): void {
  const field = fieldOf(desc, fieldNo);
  if (field === undefined) {
    reader.skip(wireType, fieldNo, RECURSION_LIMIT - depth);
    return;
  }
  switch (field.fieldKind) {
    case "scalar":
      walkScalar(reader, field.scalar, field.utf8Validation);
      return;
    case "enum":
      reader.uint32();
      return;
    case "message":
      walkNested(reader, field, depth);
      return;
    case "list": {
      if (field.listKind === "message") {
        walkNested(reader, field, depth);
        return;
      }
      const scalar = field.scalar ?? ScalarType.INT32;
      if (wireType !== WireType.LengthDelimited || scalar === ScalarType.STRING || scalar === ScalarType.BYTES) {
        walkScalar(reader, scalar, field.utf8Validation);
        return;
      }
      const packedEnd = reader.uint32() + reader.pos;
      while (reader.pos < packedEnd) walkScalar(reader, scalar, field.utf8Validation);
      return;
    }
    case "map": {
      const entryEnd = reader.uint32() + reader.pos;
      while (reader.pos < entryEnd) {
        const [entryFieldNo] = reader.tag();
        if (entryFieldNo === 1) {
          walkScalar(reader, field.mapKey, field.utf8Validation);
        } else if (entryFieldNo === 2) {
          if (field.mapKind === "message") walkNested(reader, field, depth);
          else if (field.mapKind === "enum") reader.uint32();
          else walkScalar(reader, field.scalar, field.utf8Validation);
        }
      }
      return;
    }
  }
}

/** Reads a whole serialized message of type `desc`; throws exactly where `fromBinary(desc, bytes)` throws. */
export function walkBytes(desc: DescMessage, bytes: Uint8Array): void {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [fieldNo, wireType] = reader.tag();
    walkField(reader, desc, fieldNo, wireType, 1);
  }
}
