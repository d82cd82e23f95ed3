// What the views' code is made of: how protobuf-es represents each scalar, wrapper and JSON message type, and the
// names and modules protoc-gen-es gives a descriptor.
import { ScalarType } from "@bufbuild/protobuf";

/** Wrapper messages protobuf-es unboxes in a singular field: their view type, zero value and value reader. */
export const WRAPPERS = {
  "google.protobuf.DoubleValue": ["number", "0", "reader.double()"],
  "google.protobuf.FloatValue": ["number", "0", "reader.float()"],
  "google.protobuf.Int64Value": ["bigint", "0n", "reader.int64() as bigint"],
  "google.protobuf.UInt64Value": ["bigint", "0n", "reader.uint64() as bigint"],
  "google.protobuf.Int32Value": ["number", "0", "reader.int32()"],
  "google.protobuf.UInt32Value": ["number", "0", "reader.uint32()"],
  "google.protobuf.BoolValue": ["boolean", "false", "reader.bool()"],
  "google.protobuf.StringValue": ["string", '""', "reader.string(true)"],
  "google.protobuf.BytesValue": ["Uint8Array", "NO_BYTES", "reader.bytes()"],
};

/** Messages protobuf-es represents as JSON in a field: a view keeps them only as protobuf-es's own value. */
export const JSON_TYPES = new Set(["google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"]);

const SCALARS = {
  [ScalarType.DOUBLE]: ["number", "0", "reader.double()"],
  [ScalarType.FLOAT]: ["number", "0", "reader.float()"],
  [ScalarType.INT64]: ["bigint", "0n", "(reader.int64() as bigint)"],
  [ScalarType.UINT64]: ["bigint", "0n", "(reader.uint64() as bigint)"],
  [ScalarType.INT32]: ["number", "0", "reader.int32()"],
  [ScalarType.FIXED64]: ["bigint", "0n", "(reader.fixed64() as bigint)"],
  [ScalarType.FIXED32]: ["number", "0", "reader.fixed32()"],
  [ScalarType.BOOL]: ["boolean", "false", "reader.bool()"],
  [ScalarType.STRING]: ["string", '""', "reader.string(UTF8)"],
  [ScalarType.BYTES]: ["Uint8Array", "NO_BYTES", "reader.bytes()"],
  [ScalarType.UINT32]: ["number", "0", "reader.uint32()"],
  [ScalarType.SFIXED32]: ["number", "0", "reader.sfixed32()"],
  [ScalarType.SFIXED64]: ["bigint", "0n", "(reader.sfixed64() as bigint)"],
  [ScalarType.SINT32]: ["number", "0", "reader.sint32()"],
  [ScalarType.SINT64]: ["bigint", "0n", "(reader.sint64() as bigint)"],
};

export const LONGS = new Set([
  ScalarType.INT64,
  ScalarType.UINT64,
  ScalarType.FIXED64,
  ScalarType.SFIXED64,
  ScalarType.SINT64,
]);

export function fail(message) {
  throw new Error(`protoc-gen-xds-views: ${message}`);
}

/** The identifier protoc-gen-es gives a message or enum (nested names joined by `_`). */
export function shapeName(desc) {
  const pkg = desc.file.proto.package;
  return (pkg === "" ? desc.typeName : desc.typeName.slice(pkg.length + 1)).replaceAll(".", "_");
}

/** Where protoc-gen-es's output for a descriptor is imported from. */
export function pbModule(desc) {
  const file = desc.file.proto.name;
  return file.startsWith("google/protobuf/")
    ? "@bufbuild/protobuf/wkt"
    : `@xdskit/protos/${file.replace(/\.proto$/, "")}_pb`;
}

/** `scalar` read as protobuf-es reads it (`utf8`: the field's UTF-8 check; `asString`: a 64-bit `jstype` string). */
export function scalarRead(scalar, utf8, asString) {
  const read = SCALARS[scalar][2].replace("UTF8", String(utf8));
  return asString && LONGS.has(scalar) ? `String(${read})` : read;
}

export function scalarType(scalar, asString) {
  return asString && LONGS.has(scalar) ? "string" : SCALARS[scalar][0];
}

export function scalarZero(scalar, asString) {
  return asString && LONGS.has(scalar) ? '"0"' : SCALARS[scalar][1];
}
