// The demo's backends: Connect servers on 127.0.0.1 that report ORCA per call with @xdskit/orca-lrs-bridge. Their
// application RPC is CSDS's FetchClientStatus, the one unary RPC among @xdskit/protos, standing in for any service.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { createServerMetricRecorder, orcaCallRecorder, orcaServerInterceptor } from "@xdskit/orca-lrs-bridge";
import { ClientStatusDiscoveryService } from "@xdskit/protos/envoy/service/status/v3/csds_pb";

export interface OrcaBackend {
  readonly port: number;
  readonly calls: number;
  close(): Promise<void>;
}

/**
 * A backend whose memory use is a server-wide value and whose CPU, application utilization and named metrics are
 * recorded per call (`queue_depth` grows with the calls in flight; `cache_hits` is there to be filtered out).
 */
export async function startOrcaBackend(cpu: number, memory: number): Promise<OrcaBackend> {
  const serverRecorder = createServerMetricRecorder();
  serverRecorder.setMemoryUtilization(memory);
  let calls = 0;
  let inFlight = 0;
  const handler = connectNodeAdapter({
    interceptors: [orcaServerInterceptor({ serverRecorder })],
    routes: (router) =>
      router.service(ClientStatusDiscoveryService, {
        async fetchClientStatus(_request, context) {
          calls++;
          inFlight++;
          const recorder = orcaCallRecorder(context);
          recorder.recordCpuUtilization(cpu + (calls % 3) * 0.01);
          recorder.recordApplicationUtilization(cpu / 2);
          recorder.recordNamedMetric("queue_depth", inFlight);
          recorder.recordNamedMetric("cache_hits", calls);
          await new Promise((resolve) => setTimeout(resolve, 2));
          inFlight--;
          return {};
        },
        async *streamClientStatus() {},
      }),
  });
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
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
