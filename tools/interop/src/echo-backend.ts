// A tiny gRPC backend for the interop test: one unary method that echoes the request bytes prefixed with the
// backend's name, defined as a generic service (raw bytes, no .proto needed).
import * as grpc from "@grpc/grpc-js";

export const ECHO_PATH = "/xdskit.interop.Echo/Echo";

const identity = (buffer: Buffer): Buffer => buffer;

const echoService: grpc.ServiceDefinition = {
  Echo: {
    path: ECHO_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
};

export interface EchoBackend {
  readonly name: string;
  readonly port: number;
  /** How many calls it answered. */
  readonly calls: number;
  close(): Promise<void>;
}

export async function startEchoBackend(name: string): Promise<EchoBackend> {
  const server = new grpc.Server();
  let calls = 0;
  server.addService(echoService, {
    Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      calls++;
      callback(null, Buffer.concat([Buffer.from(`${name}:`), call.request]));
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, boundPort) =>
      error ? reject(error) : resolve(boundPort),
    );
  });
  return {
    name,
    port,
    get calls() {
      return calls;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        // Calls still open after a short while are cut.
        setTimeout(() => server.forceShutdown(), 500).unref();
      }),
  };
}

export interface EchoResult {
  readonly ok: boolean;
  readonly reply?: string;
  readonly code?: number;
  readonly details?: string;
}

/** One unary call through `client`, with a deadline; never rejects. */
export function callEcho(client: grpc.Client, text: string, timeoutMs = 2000): Promise<EchoResult> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      ECHO_PATH,
      identity,
      identity,
      Buffer.from(text),
      { deadline: Date.now() + timeoutMs },
      (error: grpc.ServiceError | null, reply?: Buffer) => {
        if (error) resolve({ ok: false, code: error.code, details: error.details });
        else resolve({ ok: true, reply: reply?.toString() ?? "" });
      },
    );
  });
}

/** Calls until `accept` holds for a result, or the time is up; returns the last result. */
export async function callUntil(
  client: grpc.Client,
  accept: (result: EchoResult) => boolean,
  timeoutMs = 10_000,
): Promise<EchoResult> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await callEcho(client, "ping", 1000);
    if (accept(result) || Date.now() >= deadline) return result;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
