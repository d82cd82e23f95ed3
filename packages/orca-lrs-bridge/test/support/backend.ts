// A Connect backend on 127.0.0.1 for the tests: the CSDS service stands in for any application service (unary
// FetchClientStatus, bidi StreamClientStatus), with the ORCA server interceptor and, optionally, the ORCA service.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import type { ConnectRouter, HandlerContext, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  ClientStatusDiscoveryService,
  type ClientStatusRequest,
  type ClientStatusResponse,
  ClientStatusResponseSchema,
} from "@xdskit/protos/envoy/service/status/v3/csds_pb";

export interface TestBackend {
  readonly url: string;
  readonly address: string;
  close(): Promise<void>;
}

export interface TestBackendOptions {
  /** Runs for every call (each message of a stream): may record ORCA metrics, or throw to fail the call. */
  readonly handle?: (request: ClientStatusRequest, context: HandlerContext) => void;
  readonly interceptors?: Interceptor[];
  readonly routes?: (router: ConnectRouter) => void;
}

export async function startBackend(options: TestBackendOptions = {}): Promise<TestBackend> {
  const answer = (request: ClientStatusRequest, context: HandlerContext): ClientStatusResponse => {
    options.handle?.(request, context);
    return create(ClientStatusResponseSchema, {});
  };
  const handler = connectNodeAdapter({
    interceptors: options.interceptors ?? [],
    routes: (router) => {
      router.service(ClientStatusDiscoveryService, {
        fetchClientStatus: (request, context) => answer(request, context),
        async *streamClientStatus(requests, context) {
          for await (const request of requests) yield answer(request, context);
        },
      });
      options.routes?.(router);
    },
  });
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
}
