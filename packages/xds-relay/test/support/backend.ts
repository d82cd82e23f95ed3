// A Connect backend on 127.0.0.1, port 0, for calls routed through the relay: one unary method (a StringValue in and
// out, the service built at run time) answering `<backend name>:<value>`, so a test sees which endpoint served it.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create, createFileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, file_google_protobuf_wrappers, StringValueSchema } from "@bufbuild/protobuf/wkt";
import { createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";

const STRING = ".google.protobuf.StringValue";
const registry = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: "xdskit/relay-test/echo.proto",
    package: "xdskit.relaytest",
    dependency: ["google/protobuf/wrappers.proto"],
    syntax: "proto3",
    service: [{ name: "Echo", method: [{ name: "Unary", inputType: STRING, outputType: STRING }] }],
  }),
  (name) => (name === "google/protobuf/wrappers.proto" ? file_google_protobuf_wrappers : undefined),
);
const EchoService = registry.getService("xdskit.relaytest.Echo")!;

export interface Backend {
  readonly name: string;
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  close(): Promise<void>;
}

export async function startBackend(name: string, interceptors: Interceptor[] = []): Promise<Backend> {
  const server = http2.createServer(
    connectNodeAdapter({
      interceptors,
      routes: (router) => {
        router.service(EchoService, {
          unary: async (request: { value: string }) => create(StringValueSchema, { value: `${name}:${request.value}` }),
        } as never);
      },
    }),
  );
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    name,
    address: `127.0.0.1:${port}`,
    async close() {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The name of the backend that served one call over `transport`. */
export async function servedBy(transport: Transport): Promise<string> {
  const echo = createClient(EchoService, transport) as unknown as {
    unary(request: { value: string }): Promise<{ value: string }>;
  };
  return (await echo.unary({ value: "x" })).value.split(":")[0] as string;
}
