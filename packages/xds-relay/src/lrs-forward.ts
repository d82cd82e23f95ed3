// LRS through the relay (docs/decisions.md#relay-load-reports): each downstream load-reporting stream is forwarded
// as one upstream stream to the relay's first upstream server, request for request (the client's node on its first
// request, every report unchanged), and the upstream's responses (`send_all_clusters`, the clusters, the reporting
// interval) come back unchanged. The upstream streams of all clients share one HTTP/2 connection.
import { readFileSync } from "node:fs";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createWritableIterable } from "@connectrpc/connect/protocol";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { checkSameNode } from "@xdskit/control-plane/internal";
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import {
  LoadReportingService,
  type LoadStatsRequest,
  type LoadStatsResponse,
} from "@xdskit/protos/envoy/service/load_stats/v3/lrs_pb";
import type { XdsServerConfig } from "@xdskit/xds-client";
import type { Logger } from "./logger.js";

export interface LrsForwarderOptions {
  /** Where reports go: the relay's first upstream server. */
  readonly server: XdsServerConfig;
  readonly logger: Logger;
  /** Downstream LRS streams forwarded at once; one more is refused with RESOURCE_EXHAUSTED. */
  readonly maxStreams: number;
}

export interface LrsForwarder {
  serve(
    requests: AsyncIterable<LoadStatsRequest>,
    signal: AbortSignal,
    peer: string | undefined,
  ): AsyncIterable<LoadStatsResponse>;
  /** Streams forwarded now. */
  readonly streams: number;
  /** Ends every forwarded stream and the connection. */
  close(): void;
}

/** `host:port`, `dns:///host:port` or `[v6]:port` as an http(s) base URL. */
function baseUrlOf(server: XdsServerConfig): string {
  const target = server.serverUri.replace(/^dns:(\/\/[^/]*\/)?/, "").replace(/^ipv[46]:/, "");
  return `${server.channelCredentials.type === "tls" ? "https" : "http"}://${target}`;
}

export function createLrsForwarder(options: LrsForwarderOptions): LrsForwarder {
  const { server, logger } = options;
  let client: ReturnType<typeof createClient<typeof LoadReportingService>> | undefined;
  let sessions: Http2SessionManager | undefined;
  let active = 0;
  let closed = false;
  const aborts = new Set<AbortController>();

  const clientOf = () => {
    if (client) return client;
    const baseUrl = baseUrlOf(server);
    const creds = server.channelCredentials;
    const pem = (file: string | undefined) => (file === undefined ? undefined : readFileSync(file));
    const tls =
      creds.type === "tls"
        ? {
            ...(creds.caCertificateFile === undefined ? {} : { ca: pem(creds.caCertificateFile) }),
            ...(creds.certificateFile === undefined ? {} : { cert: pem(creds.certificateFile) }),
            ...(creds.privateKeyFile === undefined ? {} : { key: pem(creds.privateKeyFile) }),
          }
        : {};
    sessions = new Http2SessionManager(baseUrl, { pingIntervalMs: 60_000, pingIdleConnection: false }, tls);
    client = createClient(LoadReportingService, createGrpcTransport({ baseUrl, sessionManager: sessions }));
    return client;
  };

  async function* forward(
    requests: AsyncIterable<LoadStatsRequest>,
    signal: AbortSignal,
    peer: string | undefined,
  ): AsyncGenerator<LoadStatsResponse> {
    if (closed) throw new ConnectError("the relay is closing", Code.Unavailable);
    if (active >= options.maxStreams) {
      logger.warn(`refused an LRS stream from ${peer ?? "a client"}: ${active} are forwarded (maxLrsStreams)`);
      throw new ConnectError(
        `the relay forwards at most ${options.maxStreams} load-reporting streams at once (maxLrsStreams)`,
        Code.ResourceExhausted,
      );
    }
    active++;
    const abort = new AbortController();
    aborts.add(abort);
    const onAbort = () => abort.abort();
    signal.addEventListener("abort", onAbort);
    const upstream = createWritableIterable<LoadStatsRequest>();
    let refused: unknown;
    let node: Node | undefined;
    const pump = (async () => {
      let first = true;
      try {
        for await (const request of requests) {
          if (first) {
            first = false;
            node = request.node;
            logger.debug(`[lrs] forwarding the reports of node "${node?.id ?? ""}" from ${peer ?? "a client"}`);
          } else checkSameNode(node, request.node);
          await upstream.write(request);
        }
        upstream.close();
      } catch (error) {
        // A request refused here (another node), or the downstream stream failed: the upstream stream ends too.
        refused = error;
        upstream.close();
        abort.abort();
      }
    })();
    try {
      for await (const response of clientOf().streamLoadStats(upstream, { signal: abort.signal })) yield response;
      await pump;
      if (refused !== undefined) throw refused;
    } catch (error) {
      await pump;
      if (refused !== undefined) throw refused;
      if (signal.aborted || closed) return;
      logger.debug(`[lrs] the upstream stream of node "${node?.id ?? ""}" ended: ${String(error)}`);
      throw error;
    } finally {
      signal.removeEventListener("abort", onAbort);
      abort.abort();
      aborts.delete(abort);
      active--;
    }
  }

  return {
    serve: forward,
    get streams() {
      return active;
    },
    close() {
      closed = true;
      for (const abort of aborts) abort.abort();
      sessions?.abort();
    },
  };
}
