// Builds an `xds.type.v3.TypedStruct` Any by hand (the package ships no schema for it).
import { create, fromJson, type JsonObject, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter } from "@bufbuild/protobuf/wire";
import { type Any, AnySchema, StructSchema } from "@bufbuild/protobuf/wkt";

export function typedStruct(typeUrl: string, value: JsonObject, wrapper = "xds.type.v3.TypedStruct"): Any {
  const struct = toBinary(StructSchema, fromJson(StructSchema, value));
  const bytes = new BinaryWriter().tag(1, 2).string(typeUrl).tag(2, 2).bytes(struct).finish();
  return create(AnySchema, { typeUrl: `type.googleapis.com/${wrapper}`, value: bytes });
}
