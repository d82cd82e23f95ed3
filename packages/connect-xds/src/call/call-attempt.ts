// One attempt of a call, ended once: the pick's tracker told (LRS, policies, the ORCA report read once, A51), the
// cluster released, the A66 attempt and call metrics recorded; and how a response's end ends its attempt (a unary
// response at once, a stream when its messages end, fail or are abandoned).
import type { DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError, type StreamResponse, type UnaryResponse } from "@connectrpc/connect";
import { readOrcaReportFromHeaders } from "@xdskit/orca-lrs-bridge";
import type { OrcaLoadReport } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import type { CallEndInfo } from "../balancer/lb-policy.js";
import { MessageByteCounter } from "../grpc/message-bytes.js";
import type { CallContext } from "./call-context.js";
import type { Picked } from "./call-pick.js";
import { CallMetricName, statusName } from "./metrics.js";

/** Per-call end info; the ORCA report is parsed on first access only (A51: once per call). */
class CallEnd implements CallEndInfo {
  private parsed = false;
  private report: OrcaLoadReport | undefined;
  constructor(
    readonly code: number,
    readonly trailers: Headers,
  ) {}
  get orcaReport(): OrcaLoadReport | undefined {
    if (!this.parsed) {
      this.parsed = true;
      const result = readOrcaReportFromHeaders(this.trailers);
      this.report = result?.ok ? result.report : undefined;
    }
    return this.report;
  }
}

/** Everything that happens when an attempt ends, once. */
export class Attempt {
  private ended = false;
  readonly counter: MessageByteCounter | undefined;
  constructor(
    private readonly ctx: CallContext,
    private readonly methodName: string,
    private readonly callStart: number,
    private readonly start: number,
    readonly picked: Picked | undefined,
    countBytes = false,
  ) {
    this.counter =
      (ctx.metrics?.recordHistogram !== undefined || countBytes) && picked !== undefined
        ? new MessageByteCounter()
        : undefined;
  }

  /** `final`: the call ends with this attempt (false before a transparent retry). */
  end(code: number, trailers: Headers, final = true): void {
    if (this.ended) return;
    this.ended = true;
    const picked = this.picked;
    if (picked !== undefined) {
      picked.pick.tracker?.onCallEnded?.(new CallEnd(code, trailers));
      this.ctx.state.release(picked.entry);
    }
    if (final) this.ctx.activity?.callEnded();
    const metrics = this.ctx.metrics;
    if (metrics?.recordHistogram === undefined) return;
    const now = performance.now();
    const seconds = (now - this.start) / 1000;
    const status = statusName(code);
    const callLabels = { "grpc.method": this.methodName, "grpc.target": this.ctx.target, "grpc.status": status };
    const locality = picked?.pick.subchannel.endpoint.locality?.label;
    const attemptLabels = locality === undefined ? callLabels : { ...callLabels, "grpc.lb.locality": locality };
    metrics.recordHistogram(CallMetricName.attemptDuration, seconds, attemptLabels);
    metrics.recordHistogram(CallMetricName.attemptSentMessageSize, this.counter?.sent ?? 0, attemptLabels);
    metrics.recordHistogram(CallMetricName.attemptRcvdMessageSize, this.counter?.received ?? 0, attemptLabels);
    if (final) metrics.recordHistogram(CallMetricName.callDuration, (now - this.callStart) / 1000, callLabels);
  }
}

/** A unary response ends its attempt at once. */
export function endUnary<R extends UnaryResponse<DescMessage, DescMessage>>(response: R, attempt: Attempt): R {
  attempt.end(0, response.trailer);
  return response;
}

/** A streaming response ends its attempt when its messages are done, fail, or are abandoned. */
export function endStream<R extends StreamResponse<DescMessage, DescMessage>>(response: R, attempt: Attempt): R {
  const messages = response.message;
  const wrapped: AsyncIterable<unknown> = {
    [Symbol.asyncIterator]() {
      const inner = messages[Symbol.asyncIterator]();
      return {
        next: () =>
          inner.next().then(
            (result) => {
              if (result.done === true) attempt.end(0, response.trailer);
              return result;
            },
            (error: unknown) => {
              const connectError = ConnectError.from(error);
              attempt.end(connectError.code, connectError.metadata);
              throw error;
            },
          ),
        return: (value?: unknown) => {
          attempt.end(Code.Canceled, response.trailer);
          return inner.return?.(value) ?? Promise.resolve({ done: true as const, value: undefined });
        },
        throw: (error?: unknown) => {
          const connectError = ConnectError.from(error);
          attempt.end(connectError.code, connectError.metadata);
          return inner.throw?.(error) ?? Promise.reject(error);
        },
      } as AsyncIterator<unknown>;
    },
  };
  return { ...response, message: wrapped } as R;
}
