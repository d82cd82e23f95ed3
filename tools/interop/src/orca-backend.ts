// A @grpc/grpc-js backend that reports ORCA with grpc-js's own support (nobody here wrote it): per-call values
// through `call.getMetricsRecorder()` (sent as `endpoint-load-metrics-bin` when the server option
// `grpc.server_call_metric_recording` is set), and server values through `ServerMetricRecorder`, whose
// `addToServer` serves OpenRcaService for out-of-band reports. It answers the raw Echo method, and CSDS's
// FetchClientStatus with an empty message: a unary method Connect clients have a generated descriptor for.
import * as grpc from "@grpc/grpc-js";
import { ECHO_PATH } from "./echo-backend.js";

const identity = (buffer: Buffer): Buffer => buffer;
export const FETCH_PATH = "/envoy.service.status.v3.ClientStatusDiscoveryService/FetchClientStatus";

function unary(path: string): grpc.MethodDefinition<Buffer, Buffer> {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  };
}

export interface OrcaBackend {
  readonly port: number;
  readonly address: string;
  /** Calls answered. */
  readonly calls: number;
  /** grpc-js's own out-of-band recorder. */
  readonly serverRecorder: grpc.ServerMetricRecorder;
  close(): Promise<void>;
}

/** Each call records cpu 0.25 + 0.01 x (call number), memory 0.5, and named metrics `queue` and `calls`. */
export async function startOrcaBackend(name: string): Promise<OrcaBackend> {
  const server = new grpc.Server({ "grpc.server_call_metric_recording": 1 });
  const serverRecorder = new grpc.ServerMetricRecorder();
  serverRecorder.addToServer(server);
  let calls = 0;
  const handle =
    (reply: (request: Buffer) => Buffer) =>
    (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      calls++;
      const recorder = call.getMetricsRecorder();
      recorder.recordCPUUtilizationMetric(0.25 + 0.01 * calls);
      recorder.recordMemoryUtilizationMetric(0.5);
      recorder.recordNamedMetric("queue", 2);
      recorder.recordNamedMetric("calls", calls);
      callback(null, reply(call.request));
    };
  server.addService(
    { Echo: unary(ECHO_PATH), Fetch: unary(FETCH_PATH) },
    {
      Echo: handle((request) => Buffer.concat([Buffer.from(`${name}:`), request])),
      Fetch: handle(() => Buffer.alloc(0)),
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });
  return {
    port,
    address: `127.0.0.1:${port}`,
    get calls() {
      return calls;
    },
    serverRecorder,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => server.forceShutdown(), 500).unref();
      }),
  };
}
