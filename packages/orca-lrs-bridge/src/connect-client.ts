// Client interceptors for @connectrpc/connect: read each call's ORCA report from its trailers (for streams, once
// the response stream has ended), and optionally count the call into a locality's load.
import type { DescMessage } from "@bufbuild/protobuf";
import {
  ConnectError,
  type Interceptor,
  type StreamRequest,
  type StreamResponse,
  type UnaryRequest,
} from "@connectrpc/connect";
import type { OrcaLoadReport } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import type { CallOutcome, LocalityStats } from "./locality-stats.js";
import type { OrcaParseError } from "./orca-error.js";
import { readOrcaReportFromHeaders } from "./orca-trailers.js";

export interface OrcaClientInterceptorOptions {
  /** Each call's ORCA report, when it carried one (the call may have failed). */
  onReport(report: OrcaLoadReport, request: UnaryRequest | StreamRequest): void;
  /** A report that could not be read; nothing of it is delivered. Default: ignored. */
  onError?(error: OrcaParseError, request: UnaryRequest | StreamRequest): void;
}

/** Hands every call's per-call ORCA report to `onReport`. */
export function orcaClientInterceptor(options: OrcaClientInterceptorOptions): Interceptor {
  return (next) => (req) =>
    observeCall(next, req, (_outcome, trailers) => {
      const result = readOrcaReportFromHeaders(trailers);
      if (result === undefined) return;
      if (result.ok) options.onReport(result.report, req);
      else options.onError?.(result.error, req);
    });
}

export interface LoadReportingInterceptorOptions {
  /** The locality the calls go to: one handle, or one per call (undefined: the call is not counted). */
  readonly stats: LocalityStats | ((request: UnaryRequest | StreamRequest) => LocalityStats | undefined);
  /** A call whose ORCA report could not be read: it is counted without one. */
  onOrcaError?(error: OrcaParseError, request: UnaryRequest | StreamRequest): void;
}

/** Counts every call (started, then finished with its outcome and ORCA report) into a locality's load. */
export function loadReportingInterceptor(options: LoadReportingInterceptorOptions): Interceptor {
  const pick = typeof options.stats === "function" ? options.stats : () => options.stats as LocalityStats;
  return (next) => (req) => {
    const stats = pick(req);
    if (stats === undefined) return next(req);
    stats.callStarted();
    return observeCall(next, req, (outcome, trailers) => {
      const result = readOrcaReportFromHeaders(trailers);
      if (result !== undefined && !result.ok) options.onOrcaError?.(result.error, req);
      stats.callFinished(outcome, result?.ok ? result.report : undefined);
    });
  };
}

type Next = (req: UnaryRequest | StreamRequest) => Promise<Awaited<ReturnType<ReturnType<Interceptor>>>>;

/**
 * Runs the call and calls `onEnd` exactly once with its outcome and trailers (for a failed call, the error's
 * metadata, which holds its trailers). A stream ends when its responses are exhausted, fail, or are abandoned.
 */
function observeCall(
  next: Next,
  req: UnaryRequest | StreamRequest,
  onEnd: (outcome: CallOutcome, trailers: Headers) => void,
): ReturnType<Next> {
  return next(req).then(
    (res) => {
      if (!res.stream) {
        onEnd("ok", res.trailer);
        return res;
      }
      return { ...res, message: watchStream(res, onEnd) } as StreamResponse<DescMessage, DescMessage>;
    },
    (error: unknown) => {
      onEnd("error", ConnectError.from(error).metadata);
      throw error;
    },
  );
}

async function* watchStream<T>(
  res: { readonly message: AsyncIterable<T>; readonly trailer: Headers },
  onEnd: (outcome: CallOutcome, trailers: Headers) => void,
): AsyncGenerator<T> {
  let outcome: CallOutcome = "error";
  let trailers = res.trailer;
  try {
    yield* res.message;
    outcome = "ok";
  } catch (error) {
    trailers = ConnectError.from(error).metadata;
    throw error;
  } finally {
    onEnd(outcome, trailers);
  }
}
