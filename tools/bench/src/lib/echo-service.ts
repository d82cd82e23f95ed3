// An echo service built at run time from google.protobuf.StringValue (no generated code needed), for the transport
// benchmarks: the backend answers a unary call with `<name>:<value>`, a server stream of `<count>:<size>` with
// `count` messages of `size` characters.
import { create, createFileRegistry, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  FileDescriptorProtoSchema,
  file_google_protobuf_wrappers,
  type StringValue,
  StringValueSchema,
} from "@bufbuild/protobuf/wkt";

const STRING = ".google.protobuf.StringValue";

export const EchoService = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: "xdskit/bench/echo.proto",
    package: "xdskit.bench",
    dependency: ["google/protobuf/wrappers.proto"],
    syntax: "proto3",
    service: [
      {
        name: "Echo",
        method: [
          { name: "Unary", inputType: STRING, outputType: STRING },
          { name: "ServerStream", inputType: STRING, outputType: STRING, serverStreaming: true },
        ],
      },
    ],
  }),
  (name) => (name === "google/protobuf/wrappers.proto" ? file_google_protobuf_wrappers : undefined),
).getService("xdskit.bench.Echo")!;

export const ECHO_PATH = "/xdskit.bench.Echo/Unary";
/** Answers `<count>:<size>` with `count` messages of `size` characters. */
export const STREAM_PATH = "/xdskit.bench.Echo/ServerStream";

export const serializeText = (value: string): Buffer =>
  Buffer.from(toBinary(StringValueSchema, create(StringValueSchema, { value })));
export const deserializeText = (bytes: Buffer): StringValue => fromBinary(StringValueSchema, bytes);
