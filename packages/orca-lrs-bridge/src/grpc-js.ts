// `@xdskit/orca-lrs-bridge/grpc-js`: client interceptors for @grpc/grpc-js (an optional peer dependency), reading
// each call's ORCA report from the status metadata (trailers) and optionally counting the call into a locality.
import * as grpc from "@grpc/grpc-js";
import type { OrcaLoadReport } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import type { LocalityStats } from "./locality-stats.js";
import type { OrcaParseError } from "./orca-error.js";
import { type OrcaReadResult, readOrcaReport } from "./orca-trailers.js";

/** Reads the ORCA report of a call from its trailers (grpc-js has already decoded the `-bin` value). */
export function readOrcaReportFromMetadata(metadata: grpc.Metadata): OrcaReadResult | undefined {
  return readOrcaReport((name) => metadata.get(name));
}

export interface OrcaGrpcJsInterceptorOptions {
  /** Each call's ORCA report, when it carried one (the call may have failed). */
  onReport(report: OrcaLoadReport, call: grpc.InterceptorOptions): void;
  /** A report that could not be read; nothing of it is delivered. Default: ignored. */
  onError?(error: OrcaParseError, call: grpc.InterceptorOptions): void;
}

/** Hands every call's per-call ORCA report to `onReport`. */
export function orcaGrpcJsInterceptor(options: OrcaGrpcJsInterceptorOptions): grpc.Interceptor {
  return (callOptions, nextCall) =>
    onStatus(callOptions, nextCall, undefined, (status) => {
      const result = readOrcaReportFromMetadata(status.metadata);
      if (result === undefined) return;
      if (result.ok) options.onReport(result.report, callOptions);
      else options.onError?.(result.error, callOptions);
    });
}

export interface LoadReportingGrpcJsInterceptorOptions {
  /** The locality the calls go to: one handle, or one per call (undefined: the call is not counted). */
  readonly stats: LocalityStats | ((call: grpc.InterceptorOptions) => LocalityStats | undefined);
  /** A call whose ORCA report could not be read: it is counted without one. */
  onOrcaError?(error: OrcaParseError, call: grpc.InterceptorOptions): void;
}

/** Counts every call (started, then finished with its status and ORCA report) into a locality's load. */
export function loadReportingGrpcJsInterceptor(options: LoadReportingGrpcJsInterceptorOptions): grpc.Interceptor {
  const pick = typeof options.stats === "function" ? options.stats : () => options.stats as LocalityStats;
  return (callOptions, nextCall) => {
    const stats = pick(callOptions);
    if (stats === undefined) return new grpc.InterceptingCall(nextCall(callOptions));
    return onStatus(
      callOptions,
      nextCall,
      () => stats.callStarted(),
      (status) => {
        const result = readOrcaReportFromMetadata(status.metadata);
        if (result !== undefined && !result.ok) options.onOrcaError?.(result.error, callOptions);
        stats.callFinished(status.code === grpc.status.OK ? "ok" : "error", result?.ok ? result.report : undefined);
      },
    );
  };
}

function onStatus(
  callOptions: grpc.InterceptorOptions,
  nextCall: grpc.NextCall,
  onStart: (() => void) | undefined,
  onEnd: (status: grpc.StatusObject) => void,
): grpc.InterceptingCall {
  return new grpc.InterceptingCall(nextCall(callOptions), {
    start(metadata, _listener, next) {
      onStart?.();
      next(metadata, {
        onReceiveStatus(status, nextStatus) {
          onEnd(status);
          nextStatus(status);
        },
      });
    },
  });
}
