// `LoadReportingService.StreamLoadStats` over the raw gRPC call of the ADS methods (streams/grpc-call.ts), so an LRS
// stream is read and answered as an ADS stream is (docs/limits-control-plane.md): a message over maxRequestBytes is
// refused with RESOURCE_EXHAUSTED as soon as its frame header shows the size, and the stream reset; a request that
// does not decode ends the stream with INVALID_ARGUMENT saying why; the first request's node passes the same
// admission (limits, identity binding, `authorize`). The sink (lrs-sink.ts) does the rest.
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import {
  type LoadStatsRequest,
  LoadStatsRequestSchema,
  type LoadStatsResponse,
  LoadStatsResponseSchema,
} from "@xdskit/protos/envoy/service/load_stats/v3/lrs_pb";
import { checkNode, InvalidRequestError, type ServerLimits, undecodable } from "../limits.js";
import type { ScopedLogger } from "../logger.js";
import { StreamRefusedError } from "../security/authorization.js";
import type { PeerIdentity } from "../security/identity.js";
import type { GrpcServerCall } from "../streams/grpc-call.js";
import { PushQueue } from "../streams/push-queue.js";

/** What answers an LRS stream: the server's sink, or a resource source's forwarder (resources/served.ts). */
export interface LrsServe {
  serve(
    requests: AsyncIterable<LoadStatsRequest>,
    signal: AbortSignal,
    peer: string | undefined,
  ): AsyncIterable<LoadStatsResponse>;
}

export interface LrsCallDeps {
  readonly sink: LrsServe;
  readonly limits: ServerLimits;
  readonly logger: ScopedLogger;
  /** The server's admission of a stream's first node; throws StreamRefusedError. */
  admit(peer: PeerIdentity, node: Node | undefined): void;
  /** The first request's node was admitted. */
  admitted?(node: Node | undefined, peer: PeerIdentity): void;
}

/** Serves one StreamLoadStats call until it ends. */
export function serveLrsCall(call: GrpcServerCall, peer: PeerIdentity, deps: LrsCallDeps): void {
  const requests = new PushQueue<LoadStatsRequest>();
  const abort = new AbortController();
  let first = true;
  let cancelled = false;

  call.start({
    message(bytes) {
      if (requests.ended) return;
      try {
        const request = decode(bytes, deps.limits);
        if (first) {
          first = false;
          if (request.node !== undefined) checkNode(deps.limits, request.node);
          deps.admit(peer, request.node);
          deps.admitted?.(request.node, peer);
        }
        requests.push(request);
      } catch (error) {
        requests.end(error);
      }
    },
    halfClose: () => requests.end(),
    cancel() {
      cancelled = true;
      requests.end();
      abort.abort();
    },
    refuse: (code, message) => requests.end(new InvalidRequestError(message, code)),
    deadlineExceeded(message) {
      // The status goes out now; the sink's loop, stopped by the abort, ends a call already ended.
      call.end(Code.DeadlineExceeded, message);
      requests.end();
      abort.abort();
    },
  });

  void (async () => {
    let status = { code: 0, message: "" };
    try {
      for await (const response of deps.sink.serve(requests, abort.signal, call.peer)) {
        const bytes = toBinary(LoadStatsResponseSchema, response);
        call.write({ parts: [bytes], size: bytes.length }, () => {});
      }
    } catch (error) {
      status = statusOf(error, deps.logger);
    }
    if (cancelled) call.end(undefined, "the client went away");
    else call.end(status.code, status.message);
  })();
}

function decode(bytes: Uint8Array, limits: ServerLimits): LoadStatsRequest {
  try {
    return fromBinary(LoadStatsRequestSchema, bytes);
  } catch (error) {
    throw undecodable(LoadStatsRequestSchema.name, error, limits);
  }
}

/** The status a failed stream ends with: a refusal's or a bad request's own, INTERNAL for anything else. */
function statusOf(error: unknown, logger: ScopedLogger): { code: number; message: string } {
  if (error instanceof StreamRefusedError) {
    logger.warn(`refused LRS stream: ${error.message}`);
    return { code: error.code, message: error.message };
  }
  if (error instanceof InvalidRequestError) {
    logger.warn(`invalid LRS request: ${error.message}`);
    return { code: error.code, message: error.message };
  }
  if (error instanceof ConnectError) return { code: error.code, message: error.rawMessage };
  logger.error("internal error in an LRS stream", error);
  return { code: Code.Internal, message: "internal error in the management server" };
}
