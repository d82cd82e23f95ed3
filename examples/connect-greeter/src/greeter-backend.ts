// One Greeter backend: a Connect service over HTTP/2 (gRPC and Connect protocols) on 127.0.0.1 that says which
// backend answered and reports ORCA per call (@xdskit/orca-lrs-bridge), so the client's load reports to
// `xdskit serve` carry a CPU utilization per locality.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { orcaCallRecorder, orcaServerInterceptor } from "@xdskit/orca-lrs-bridge";
import { GreeterService } from "./gen/greeter/v1/greeter_pb.js";

export interface GreeterBackend {
  readonly name: string;
  readonly port: number;
  /** Calls served so far. */
  readonly calls: number;
  close(): Promise<void>;
}

export interface GreeterBackendOptions {
  /** Says who answered: `greeter-a`. */
  readonly name: string;
  /** Its zone, as serve/endpoints.yaml places it. */
  readonly zone: string;
  /** 0: any free port. */
  readonly port: number;
  /** The CPU utilization it reports per call (ORCA), 0 to 1. */
  readonly cpuUtilization: number;
}

export async function startGreeterBackend(options: GreeterBackendOptions): Promise<GreeterBackend> {
  let calls = 0;
  const handler = connectNodeAdapter({
    interceptors: [orcaServerInterceptor()],
    routes: (router) =>
      router.service(GreeterService, {
        sayHello(request, context) {
          calls++;
          orcaCallRecorder(context).recordCpuUtilization(options.cpuUtilization);
          return {
            message: `Hello, ${request.name || "stranger"}!`,
            backend: options.name,
            zone: options.zone,
          };
        },
      }),
  });
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    name: options.name,
    port: (server.address() as AddressInfo).port,
    get calls() {
      return calls;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.close();
        server.close(() => resolve());
      }),
  };
}
