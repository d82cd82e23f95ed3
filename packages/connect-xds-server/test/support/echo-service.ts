// A test service built at run time from google.protobuf.StringValue: unary, server streaming and a call that waits
// for the test to release it (for calls in flight across a Listener change).
import { create, createFileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, file_google_protobuf_wrappers, StringValueSchema } from "@bufbuild/protobuf/wkt";
import { type ConnectRouter, createClient, type Transport } from "@connectrpc/connect";

const STRING = ".google.protobuf.StringValue";

const file = create(FileDescriptorProtoSchema, {
  name: "xdskit/test/server-echo.proto",
  package: "xdskit.test",
  dependency: ["google/protobuf/wrappers.proto"],
  syntax: "proto3",
  service: [
    {
      name: "Echo",
      method: [
        { name: "Unary", inputType: STRING, outputType: STRING },
        { name: "ServerStream", inputType: STRING, outputType: STRING, serverStreaming: true },
        { name: "Held", inputType: STRING, outputType: STRING },
      ],
    },
  ],
});

const registry = createFileRegistry(file, (name) =>
  name === "google/protobuf/wrappers.proto" ? file_google_protobuf_wrappers : undefined,
);

export const EchoService = registry.getService("xdskit.test.Echo")!;

const text = (value: string) => create(StringValueSchema, { value });

export interface EchoRoutes {
  readonly routes: (router: ConnectRouter) => void;
  /** Calls that reached the service, by method. */
  readonly calls: Map<string, number>;
  /** Resolves when a `Held` call has arrived. */
  heldArrived(): Promise<void>;
  /** Lets every `Held` call waiting answer. */
  release(): void;
}

export function echoRoutes(): EchoRoutes {
  const calls = new Map<string, number>();
  const count = (method: string) => calls.set(method, (calls.get(method) ?? 0) + 1);
  let releaseHeld: () => void = () => {};
  let held = new Promise<void>((resolve) => {
    releaseHeld = resolve;
  });
  let arrived: () => void = () => {};
  let arrival = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  return {
    calls,
    heldArrived: () => arrival,
    release() {
      releaseHeld();
      held = new Promise<void>((resolve) => {
        releaseHeld = resolve;
      });
      arrival = new Promise<void>((resolve) => {
        arrived = resolve;
      });
    },
    routes(router) {
      router.service(EchoService, {
        unary(request: { value: string }) {
          count("Unary");
          return text(`echo:${request.value}`);
        },
        async *serverStream(request: { value: string }) {
          count("ServerStream");
          for (let i = 0; i < 2; i++) yield text(`${request.value}:${i}`);
        },
        async held(request: { value: string }) {
          count("Held");
          const wait = held;
          arrived();
          await wait;
          return text(`held:${request.value}`);
        },
      } as never);
    },
  };
}

export interface Echo {
  unary(
    request: { value: string },
    options?: { headers?: Record<string, string>; timeoutMs?: number },
  ): Promise<{ value: string }>;
  serverStream(request: { value: string }): AsyncIterable<{ value: string }>;
  held(request: { value: string }, options?: { timeoutMs?: number }): Promise<{ value: string }>;
}

export function echoClient(transport: Transport): Echo {
  return createClient(EchoService, transport) as unknown as Echo;
}
