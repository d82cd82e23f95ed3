// A test service built at run time from google.protobuf.StringValue, with the four kinds of method.
import { create, createFileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, file_google_protobuf_wrappers } from "@bufbuild/protobuf/wkt";

const STRING = ".google.protobuf.StringValue";

const file = create(FileDescriptorProtoSchema, {
  name: "xdskit/test/echo.proto",
  package: "xdskit.test",
  dependency: ["google/protobuf/wrappers.proto"],
  syntax: "proto3",
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
  ],
});

const registry = createFileRegistry(file, (name) =>
  name === "google/protobuf/wrappers.proto" ? file_google_protobuf_wrappers : undefined,
);

export const EchoService = registry.getService("xdskit.test.Echo")!;
export const OtherService = registry.getService("xdskit.test.Other")!;
