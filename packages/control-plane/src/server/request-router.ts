// Where each HTTP/2 request of a server goes: ADS (SotW, delta) and LRS over raw gRPC calls, everything else through
// connect-node.

import type * as http2 from "node:http2";
import { Code } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { AggregatedDiscoveryService } from "@xdskit/protos/envoy/service/discovery/v3/ads_pb";
import { LoadReportingService } from "@xdskit/protos/envoy/service/load_stats/v3/lrs_pb";
import type { StreamKind } from "../hooks/hook-events.js";
import { type LrsCallDeps, serveLrsCall } from "../lrs/lrs-call.js";
import { clientStatusAccess, clientStatusPolicy } from "../security/client-status-access.js";
import { createPeerLookup, refuseUnverifiedPeers } from "../security/identity-peers.js";
import { DeltaStream } from "../streams/delta-stream.js";
import { openGrpcCall, refuseCall } from "../streams/grpc-call.js";
import { SotwStream } from "../streams/sotw-stream.js";
import type { StreamHost } from "../streams/stream-base.js";
import type { ManagementServerOptions } from "./management-server-api.js";

const SOTW_PATH = `/${AggregatedDiscoveryService.typeName}/${AggregatedDiscoveryService.method.streamAggregatedResources.name}`;
const DELTA_PATH = `/${AggregatedDiscoveryService.typeName}/${AggregatedDiscoveryService.method.deltaAggregatedResources.name}`;
const LRS_PATH = `/${LoadReportingService.typeName}/${LoadReportingService.method.streamLoadStats.name}`;

export type ServeRequest = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;

export interface RequestRouterOptions {
  /** The server as its ADS streams see it; its limits and logger serve every call. */
  readonly host: StreamHost;
  /** `delta`, `routes` and the CSDS access options, read as the server's options are. */
  readonly options: ManagementServerOptions;
  /** What answers an LRS stream, and the admission of its first node. */
  readonly lrs: () => Pick<LrsCallDeps, "sink" | "admit" | "admitted">;
  /** Called before each ADS stream of `kind` is served: the first of a protocol warms its change paths (warm-up.ts). */
  readonly opening: (kind: StreamKind) => void;
}

/**
 * The ADS methods are served by the streams over raw gRPC (grpc-call.ts), so that one encoded response can be
 * written to many streams and each stream sees its own write queue; LRS over the same calls, so its requests are
 * read and refused as ADS requests are; other services go through connect-node.
 */
export function createRequestRouter({ host, options, lrs, opening }: RequestRouterOptions): ServeRequest {
  const { limits, logger } = host;
  const peers = createPeerLookup();
  const csdsPolicy = clientStatusPolicy(options);
  /** Services other than ADS and LRS: those `options.routes` hosts beside them. */
  const connectHandler = connectNodeAdapter({
    routes: (router) => options.routes?.(router),
    grpc: true,
    connect: false,
    grpcWeb: false,
    readMaxBytes: limits.maxRequestBytes,
    interceptors: [refuseUnverifiedPeers, ...(csdsPolicy ? [clientStatusAccess(csdsPolicy)] : [])],
    contextValues: (req) => peers.contextValues(req),
  });
  let nextStreamId = 0;

  const serveLrs: ServeRequest = (req, res) => {
    const call = openGrpcCall(req, res, { maxRequestBytes: limits.maxRequestBytes, logger });
    if (!call) return;
    serveLrsCall(call, peers.peerOf(req), { ...lrs(), limits, logger: logger.child("[lrs]") });
  };

  return (req, res) => {
    const path = req.headers[":path"];
    if (path === LRS_PATH) {
      serveLrs(req, res);
      return;
    }
    if (path !== SOTW_PATH && path !== DELTA_PATH) {
      connectHandler(req, res);
      return;
    }
    if (path === DELTA_PATH && options.delta === false) {
      refuseCall(res, Code.Unimplemented, "delta xDS is not enabled on this server");
      return;
    }
    const call = openGrpcCall(req, res, { maxRequestBytes: limits.maxRequestBytes, logger });
    if (!call) return;
    const id = ++nextStreamId;
    const streamLogger = logger.child(`[ads #${id}]`);
    const peer = peers.peerOf(req);
    const kind = path === SOTW_PATH ? "sotw" : "delta";
    opening(kind);
    const stream =
      kind === "sotw"
        ? new SotwStream(host, id, kind, call, streamLogger, peer)
        : new DeltaStream(host, id, kind, call, streamLogger, peer);
    stream.serve();
  };
}
