// Test services built at run time: Echo (google.protobuf.StringValue, the four kinds of method), Other, and Json over
// a Pair message whose JSON form the transport's jsonOptions change.
import { create, createFileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, file_google_protobuf_wrappers } from "@bufbuild/protobuf/wkt";

const STRING = ".google.protobuf.StringValue";
/** `xdskit.test.Pair { string first_name = 1; int32 count = 2; }`: a message whose JSON options show. */
const PAIR = ".xdskit.test.Pair";

const file = create(FileDescriptorProtoSchema, {
  name: "xdskit/test/echo.proto",
  package: "xdskit.test",
  dependency: ["google/protobuf/wrappers.proto"],
  syntax: "proto3",
  messageType: [
    {
      name: "Pair",
      field: [
        { name: "first_name", number: 1, type: 9, label: 1, jsonName: "firstName" },
        { name: "count", number: 2, type: 5, label: 1, jsonName: "count" },
      ],
    },
  ],
  service: [
    {
      name: "Echo",
      method: [
        { name: "Unary", inputType: STRING, outputType: STRING },
        { name: "ServerStream", inputType: STRING, outputType: STRING, serverStreaming: true },
        { name: "ClientStream", inputType: STRING, outputType: STRING, clientStreaming: true },
        { name: "BidiStream", inputType: STRING, outputType: STRING, clientStreaming: true, serverStreaming: true },
      ],
    },
    { name: "Other", method: [{ name: "Call", inputType: STRING, outputType: STRING }] },
    {
      name: "Json",
      method: [
        { name: "Unary", inputType: PAIR, outputType: PAIR },
        { name: "ServerStream", inputType: PAIR, outputType: PAIR, serverStreaming: true },
      ],
    },
  ],
});

const registry = createFileRegistry(file, (name) =>
  name === "google/protobuf/wrappers.proto" ? file_google_protobuf_wrappers : undefined,
);

export const EchoService = registry.getService("xdskit.test.Echo")!;
export const OtherService = registry.getService("xdskit.test.Other")!;
export const JsonService = registry.getService("xdskit.test.Json")!;
export const PairSchema = registry.getMessage("xdskit.test.Pair")!;
