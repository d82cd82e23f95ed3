// One interop backend: a separate HTTP/2 server on its own 127.0.0.1 port, standing for one instance of a managed
// instance group. It serves grpc.testing.TestService (gRPC over connect-node, an error before any message answered
// Trailers-Only as gRPC servers answer it): UnaryCall answers with its server id
// and host name, EmptyCall with an empty message, and both send its host name in the `hostname` response header,
// which is how a client names the peer of an EmptyCall (as gRPC's xDS interop servers do).
//
// `stop()` is what stopping the instance does to its clients: the listener closes and every open connection is
// destroyed (calls in flight fail, new connections are refused). `start()` listens again on the same port, as the
// instance coming back at the same address (docs/decisions.md#xds-interop-driver: no EDS health change goes with it).
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import { OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { EmptySchema, SimpleResponseSchema, TestService } from "./gen/grpc/testing/test_pb.js";
import { applyRpcBehaviors, parseRpcBehaviors, RPC_BEHAVIOR_HEADER } from "./rpc-behavior.js";
import { trailersOnlyAdapter } from "./trailers-only.js";

/** The response header that carries the backend's host name. */
export const HOSTNAME_HEADER = "hostname";

export interface Backend {
  /** The instance's host name: what clients see as the peer. */
  readonly name: string;
  readonly port: number;
  /** `127.0.0.1:port`. */
  readonly address: string;
  readonly running: boolean;
  /** Calls answered since the backend was created, of both methods. */
  readonly calls: number;
  /** Closes the listener and destroys every connection. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  /** Stops for good. */
  close(): Promise<void>;
}

export interface BackendOptions {
  /** The host name (and server id) it answers with. */
  readonly name: string;
  /** Sends a per-call ORCA report (`endpoint-load-metrics-bin`) with this application_utilization and 100 qps. */
  readonly applicationUtilization?: number;
}

function listen(server: http2.Http2Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once("error", onError);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

export async function startBackend(options: BackendOptions): Promise<Backend> {
  const { name } = options;
  let calls = 0;
  const orca =
    options.applicationUtilization === undefined
      ? undefined
      : Buffer.from(
          toBinary(
            OrcaLoadReportSchema,
            create(OrcaLoadReportSchema, {
              applicationUtilization: options.applicationUtilization,
              rpsFractional: 100,
            }),
          ),
        ).toString("base64");
  /** What every call does before its answer: name the backend, obey `rpc-behavior`, attach the ORCA report. */
  const serve = async (context: HandlerContext) => {
    calls++;
    context.responseHeader.set(HOSTNAME_HEADER, name);
    if (orca !== undefined) context.responseTrailer.set("endpoint-load-metrics-bin", orca);
    const previous = Number(context.requestHeader.get("grpc-previous-rpc-attempts") ?? "0");
    await applyRpcBehaviors(
      parseRpcBehaviors(context.requestHeader.get(RPC_BEHAVIOR_HEADER), name),
      context.signal,
      Number.isInteger(previous) ? previous : 0,
    );
  };
  // An error before any message is answered Trailers-Only, as gRPC's interop servers answer it.
  const handler = trailersOnlyAdapter({
    acceptCompression: [compressionGzip, compressionBrotli],
    routes: (router) =>
      router.service(TestService, {
        emptyCall: async (_request, context) => {
          await serve(context);
          return create(EmptySchema);
        },
        unaryCall: async (request, context) => {
          await serve(context);
          return create(SimpleResponseSchema, { hostname: name, ...(request.fillServerId ? { serverId: name } : {}) });
        },
      }),
  });

  let server: http2.Http2Server | undefined;
  const sessions = new Set<http2.ServerHttp2Session>();
  const open = async (port: number): Promise<number> => {
    const next = http2.createServer(handler);
    // A connection reset by a client must never reach the process as an unhandled 'error'.
    next.on("session", (session) => {
      sessions.add(session);
      session.on("error", () => {});
      session.once("close", () => sessions.delete(session));
    });
    const bound = await listen(next, port);
    next.on("error", () => {});
    server = next;
    return bound;
  };
  const shut = (): Promise<void> => {
    const current = server;
    server = undefined;
    if (!current) return Promise.resolve();
    return new Promise((resolve) => {
      current.close(() => resolve());
      for (const session of sessions) session.destroy();
    });
  };

  const port = await open(0);
  return {
    name,
    port,
    address: `127.0.0.1:${port}`,
    get running() {
      return server !== undefined;
    },
    get calls() {
      return calls;
    },
    stop: shut,
    start: async () => {
      if (!server) await open(port);
    },
    close: shut,
  };
}
