import { create, createFileRegistry, type DescMessage } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  file_google_protobuf_struct,
} from "@bufbuild/protobuf/wkt";

/**
 * `xds.type.v3.TypedStruct` (`udpa.type.v1.TypedStruct` has the same fields): `string type_url = 1;
 * google.protobuf.Struct value = 2;`. @xdskit/protos generates no schema for it, so it is described here, and read
 * with protobuf-es's `fromBinary` like every other message.
 */
export const TypedStructSchema: DescMessage = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: "xdskit/internal/typed_struct.proto",
    package: "xds.type.v3",
    syntax: "proto3",
    dependency: ["google/protobuf/struct.proto"],
    messageType: [
      {
        name: "TypedStruct",
        field: [
          {
            name: "type_url",
            jsonName: "typeUrl",
            number: 1,
            label: FieldDescriptorProto_Label.OPTIONAL,
            type: FieldDescriptorProto_Type.STRING,
          },
          {
            name: "value",
            jsonName: "value",
            number: 2,
            label: FieldDescriptorProto_Label.OPTIONAL,
            type: FieldDescriptorProto_Type.MESSAGE,
            typeName: ".google.protobuf.Struct",
          },
        ],
      },
    ],
  }),
  (name) => (name === "google/protobuf/struct.proto" ? file_google_protobuf_struct : undefined),
).getMessage("xds.type.v3.TypedStruct")!;
