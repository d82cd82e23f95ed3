// What the generated wire views (src/gen/**/*_view.ts, written by tools/protoc-gen-xds-views from views.json) call.
// A view is the part of a message a decoder reads, shaped like the protobuf-es message (the same property names and
// types), read straight from the bytes: its reader accepts and rejects exactly the bytes `fromBinary` accepts and
// rejects, throws the same errors, and gives every field it keeps the value `fromBinary` gives it. Fields it does not
// keep are walked (wire-walk.ts). test/fuzz/wire-views.test.ts proves it against protobuf-es.
import { type DescMessage, fromBinary, mergeFromBinary } from "@bufbuild/protobuf";
import { type BinaryReader, getTextEncoding } from "@bufbuild/protobuf/wire";
import { RECURSION_LIMIT, walkField } from "./wire-walk.js";

export { walkField };

/** The value of a oneof with no member set (shared, frozen: readers replace it, never write into it). */
export const NO_CASE: { readonly case: undefined; readonly value?: undefined } = Object.freeze({ case: undefined });
/** A repeated field with no element (shared, frozen: readers replace it before the first push). */
export const NO_ITEMS: readonly never[] = Object.freeze([]);
/** A map field with no entry (shared, frozen: readers replace it before the first entry). */
export const NO_ENTRIES: { readonly [key: string]: never } = Object.freeze({});
/** A bytes field not sent (length 0, so nothing in it can change). */
export const NO_BYTES: Uint8Array = new Uint8Array(0);

/** The bytes a reader reads (a protected field of protobuf-es's BinaryReader, stable across 2.x). */
function bytesOf(reader: BinaryReader): Uint8Array {
  return (reader as unknown as { readonly buf: Uint8Array }).buf;
}

/**
 * A tag, as `BinaryReader.tag()` reads and checks it, as one number (`fieldNo << 3 | wireType`, unsigned): no array
 * per field. Throws the errors `tag()` throws.
 */
export function readTag(reader: BinaryReader): number {
  const buf = bytesOf(reader);
  const pos = reader.pos;
  // Past the end, `first` is undefined and `uint32` throws protobuf-es's "premature EOF".
  const first = buf[pos]!;
  let tag: number;
  if (first < 0x80) {
    reader.pos = pos + 1;
    tag = first;
  } else {
    tag = reader.uint32();
    const read = reader.pos - pos;
    if (read > 5 || (read === 5 && buf[reader.pos - 1]! > 0x0f))
      throw new Error("illegal tag: varint overflows uint32");
  }
  const fieldNo = tag >>> 3;
  const wireType = tag & 7;
  if (fieldNo <= 0 || wireType > 5) throw new Error(`illegal tag: field no ${fieldNo} wire type ${wireType}`);
  return tag >>> 0;
}

type Latin1Slice = (this: Uint8Array, start: number, end: number) => string;
/** Node's Buffer method that turns bytes into a string one byte per character (undefined elsewhere). */
const latin1Slice = (globalThis as { Buffer?: { prototype: { latin1Slice?: Latin1Slice } } }).Buffer?.prototype
  .latin1Slice;

/**
 * `reader.string(true)`: a UTF-8-checked string, the same errors in the same order (bounds, then UTF-8). ASCII, which
 * most xDS strings are and which reads the same in UTF-8 and Latin-1, skips the TextDecoder.
 */
export function readString(reader: BinaryReader): string {
  const length = reader.uint32();
  const start = reader.pos;
  const end = start + length;
  reader.pos = end;
  // BinaryReader's bounds check, with its error.
  if (end > reader.len) throw new RangeError("premature EOF");
  const buf = bytesOf(reader);
  if (latin1Slice !== undefined && length <= 64) {
    let i = start;
    while (i < end && buf[i]! < 0x80) i++;
    if (i === end) return latin1Slice.call(buf, start, end);
  }
  return getTextEncoding().decodeUtf8(buf.subarray(start, end), true);
}

/** The error `fromBinary` throws for a message nested deeper than its recursion limit. */
export function tooDeep(typeName: string): Error {
  return new Error(
    `cannot decode message ${typeName} from binary: maximum recursion depth of ${RECURSION_LIMIT} reached`,
  );
}

/**
 * A field a view keeps as protobuf-es's own value (a `google.protobuf.Struct` as a JsonObject, say): the field whose
 * tag started at `tagStart` is walked in place (so it ends where `fromBinary` ends it), then protobuf-es merges that
 * one field into a fresh `desc` message holding the field's `current` value, with the recursion budget left at
 * `depth`. Returns the field's value.
 */
export function readAsMessage<T>(
  reader: BinaryReader,
  desc: DescMessage,
  fieldNo: number,
  wireType: number,
  depth: number,
  tagStart: number,
  localName: string,
  current: T,
): T {
  walkField(reader, desc, fieldNo, wireType, depth);
  const scratch = fromBinary(desc, NO_BYTES) as unknown as Record<string, unknown>;
  if (current !== undefined && (current as unknown) !== NO_ENTRIES) scratch[localName] = current;
  mergeFromBinary(desc, scratch as never, bytesOf(reader).subarray(tagStart, reader.pos), {
    recursionLimit: RECURSION_LIMIT + 1 - depth,
  });
  return scratch[localName] as T;
}

/** How to read one message type: its generated view reader, and its schema (for `fromBinary` and `raw`). */
export interface ViewReader<T> {
  readonly schema: DescMessage;
  /** Throws where `fromBinary(schema, bytes)` throws. */
  readonly read: (bytes: Uint8Array) => T;
}

let reference = false;

/**
 * Reads `bytes` with `reader`: the generated view, or protobuf-es's `fromBinary` when the reference decoding is on
 * (the tests' slow path, which the fast path must match).
 */
export function readView<T>(reader: ViewReader<T>, bytes: Uint8Array): T {
  return reference ? (fromBinary(reader.schema, bytes) as T) : reader.read(bytes);
}

/** Whether the reference decoding is on: a reader that skips the views (endpoint-plain.ts) stands aside then. */
export function referenceDecoding(): boolean {
  return reference;
}

/** Tests: decode every view with `fromBinary` instead (the slow path), or go back to the generated readers. */
export function setReferenceDecoding(on: boolean): void {
  reference = on;
}

/** google.protobuf wrapper messages, unboxed as protobuf-es unboxes them in a singular field (`previous` merged). */
export function readWrapper<T>(
  reader: BinaryReader,
  depth: number,
  desc: DescMessage,
  previous: T | undefined,
  zero: T,
  readValue: (reader: BinaryReader) => T,
): T {
  const end = reader.uint32() + reader.pos;
  if (depth > RECURSION_LIMIT) throw tooDeep(desc.typeName);
  let value = previous === undefined ? zero : previous;
  while (reader.pos < end) {
    const tag = readTag(reader);
    if (tag >>> 3 === 1) value = readValue(reader);
    else walkField(reader, desc, tag >>> 3, tag & 7, depth);
  }
  return value;
}
