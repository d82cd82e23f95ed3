// The per-call path (docs/architecture.md#connect-xds-the-call-path): wait for a config selector, select the route,
// pick from the cluster's picker (waiting while it queues), send the call on the picked connection's transport and,
// when it ends, tell the pick's tracker (LRS, policies) and record the A66 metrics. A call that can be picked at once
// does not await anything before reaching connect-node.
import type { DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError, type StreamResponse, type Transport, type UnaryResponse } from "@connectrpc/connect";
import { readOrcaReportFromHeaders } from "@xdskit/orca-lrs-bridge";
import type { OrcaLoadReport } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import type { ConfigSelector, RouteSelection } from "../balancer/config-selector.js";
import type { CallEndInfo, CompletePick, PickInfo, Subchannel } from "../balancer/lb-policy.js";
import type { ClusterEntry } from "../clusters/cluster-manager.js";
import { countingBytes, MessageByteCounter } from "../grpc/message-bytes.js";
import { callSleep, faultAbortError, routeFault } from "../policies/call-policies.js";
import type { RetryBufferPool } from "../policies/retry-buffer.js";
import type { RetryThrottle } from "../policies/retry-throttle.js";
import { clearLongTimer, type LongTimer, setLongTimeout } from "../shared/long-timer.js";
import { PooledSubchannel } from "../subchannels/subchannel-pool.js";
import { CallRetry } from "./call-retry.js";
import { CallMetricName, type CallMetricsRecorder, statusName } from "./metrics.js";
import type { RequestReplay } from "./request-replay.js";

/** What the call path reads from the transport. */
export interface CallState {
  /** Undefined until the first Listener/RouteConfiguration pair (or error) arrives. */
  readonly selector: ConfigSelector | ConnectError | undefined;
  /** The cluster entries of the current selector. */
  readonly clusters: ReadonlyMap<string, ClusterEntry>;
  readonly closed: ConnectError | undefined;
  /** What calls wait for while there is no selector (the Listener, or its RouteConfiguration). */
  configWaitingFor(): string;
  /** Resolves (or calls back) when the selector or any cluster's picker changed. */
  onChange(listener: () => void): () => void;
  /** One call stopped holding a cluster. */
  release(entry: ClusterEntry): void;
}

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

interface Picked {
  readonly pick: CompletePick;
  readonly entry: ClusterEntry;
}

/** What a call's picks share: its path and headers, and its route once selected (and when it first was). */
interface CallInfo {
  path: string;
  headers: Headers;
  route?: RouteSelection;
  /** When a route was first selected for the call (A31: its max_stream_duration runs from then). */
  routedAt?: number;
}

/** One pick attempt, synchronous: the pick, an error to fail with, or undefined to wait for the next change. */
function tryPick(state: CallState, info: CallInfo): Picked | ConnectError | undefined {
  if (state.closed !== undefined) return state.closed;
  const selector = state.selector;
  if (selector === undefined) return undefined;
  if (selector instanceof ConnectError) return selector;
  const route = selector.select(info.path, info.headers);
  if (route instanceof ConnectError) return route;
  const entry = state.clusters.get(route.cluster);
  if (entry === undefined) return new ConnectError(`cluster "${route.cluster}" is not known`, Code.Internal);
  info.route = route;
  const result = entry.picker.pick(info as PickInfo);
  switch (result.type) {
    case "complete":
      if (result.subchannel.state !== "READY") {
        result.tracker?.onPickDiscarded?.();
        return undefined;
      }
      // The call holds its cluster until it ends (A28), released by its attempt.
      entry.refs++;
      return { pick: result, entry };
    case "queue":
      return undefined;
    default:
      return result.error;
  }
}

/** Waits for a change, the call's signal or its deadline. */
function waitForChange(
  state: CallState,
  signal: AbortSignal | undefined,
  deadlineAt: number | undefined,
  what: () => string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let timer: LongTimer | undefined;
    const done = () => {
      stop();
      clearLongTimer(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const stop = state.onChange(() => {
      done();
      resolve();
    });
    const onAbort = () => {
      done();
      reject(ConnectError.from(signal?.reason ?? new Error("the call was cancelled"), Code.Canceled));
    };
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener("abort", onAbort);
    if (deadlineAt !== undefined) {
      // A caller's deadline, or a route's max_stream_duration: any length (docs/decisions.md#long-timers).
      timer = setLongTimeout(
        () => {
          done();
          reject(new ConnectError(`deadline exceeded while waiting for ${what()}`, Code.DeadlineExceeded));
        },
        Math.max(0, deadlineAt - performance.now()),
      );
    }
  });
}

/**
 * The call's deadline capped by its route's max stream duration (A31), counted from when the route was first
 * selected: gRPC applies it once the resolver's configuration has routed the call, so waiting for the first
 * configuration does not count, and waiting for a connection does.
 */
function routeDeadline(callDeadline: number | undefined, info: CallInfo): number | undefined {
  const maxStreamDurationMs = info.route?.maxStreamDurationMs;
  if (maxStreamDurationMs === undefined || maxStreamDurationMs <= 0 || info.routedAt === undefined) {
    return callDeadline;
  }
  const cap = info.routedAt + maxStreamDurationMs;
  return callDeadline === undefined || cap < callDeadline ? cap : callDeadline;
}

async function pickWaiting(
  state: CallState,
  info: CallInfo,
  signal: AbortSignal | undefined,
  callDeadline: number | undefined,
): Promise<Picked> {
  for (;;) {
    const deadlineAt = routeDeadline(callDeadline, info);
    const what = () =>
      state.selector === undefined
        ? state.configWaitingFor()
        : info.route === undefined
          ? "a route"
          : (state.clusters.get(info.route.cluster)?.waitingFor() ?? `cluster "${info.route.cluster}"`);
    await waitForChange(state, signal, deadlineAt, what);
    const result = tryPick(state, info);
    if (info.route !== undefined) info.routedAt ??= performance.now();
    if (result instanceof ConnectError) throw result;
    if (result !== undefined) return result;
  }
}

export interface CallContext {
  readonly state: CallState;
  readonly target: string;
  readonly metrics: CallMetricsRecorder | undefined;
  readonly defaultTimeoutMs: number | undefined;
  /** Fault and retry draws; default Math.random. */
  readonly random?: () => number;
  /** gRPC retry throttling for this transport (A6), when configured. */
  readonly retryThrottle?: RetryThrottle;
  /** The transport's retry buffer (A6 memory limits), for calls with a retry policy. */
  readonly retryBuffer?: RetryBufferPool;
  /**
   * Unary attempts stay retryable after response headers, until a message arrives (the transport's
   * `retryAfterResponseHeaders`); by default headers commit the attempt (A6).
   */
  readonly retryAfterResponseHeaders?: boolean;
  /** Told when a call starts and when it ends (A9's idle timer counts calls in flight). */
  readonly activity?: { callStarted(): void; callEnded(): void };
}

/** Everything that happens when an attempt ends, once. */
class Attempt {
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

type Send<R> = (transport: Transport, timeoutMs: number | undefined) => Promise<R>;

/** The Connect transport behind a picked subchannel (following wrappers' `delegate`). */
function transportOf(subchannel: Subchannel): Transport {
  let current: Subchannel | undefined = subchannel;
  while (current !== undefined && !(current instanceof PooledSubchannel)) current = current.delegate;
  if (current === undefined)
    throw new ConnectError("the picked subchannel was not created by this transport", Code.Internal);
  return current.transport;
}

/** `/package.Service/Method` of each method name, built once. */
const paths = new Map<string, string>();

function pathOf(methodName: string): string {
  let path = paths.get(methodName);
  if (path === undefined) {
    path = `/${methodName}`;
    if (paths.size < 10_000) paths.set(methodName, path);
  }
  return path;
}

/**
 * Runs one call: routing and picking, the route's fault filter (A33), then `send` on the picked endpoint's
 * transport. `onResponse` wraps a streaming response so the attempt ends when its messages end. A failed attempt
 * is made again on a fresh pick as `retry` decides (call-retry.ts): at once when it never reached a server (A6's
 * transparent retry), after the policy's backoff when it failed with a code of the route's retry policy and was not
 * committed (A44). A streaming call's request messages come from `replay`, kept until the call is committed.
 */
export async function runCall<
  R extends UnaryResponse<DescMessage, DescMessage> | StreamResponse<DescMessage, DescMessage>,
>(
  ctx: CallContext,
  methodName: string,
  replay: RequestReplay<unknown> | undefined,
  signal: AbortSignal | undefined,
  timeoutMs: number | undefined,
  headers: Headers,
  send: Send<R>,
  onResponse: (response: R, attempt: Attempt) => R,
): Promise<R> {
  const callStart = performance.now();
  ctx.activity?.callStarted();
  const random = ctx.random ?? Math.random;
  const effectiveTimeout = timeoutMs === undefined ? ctx.defaultTimeoutMs : timeoutMs <= 0 ? undefined : timeoutMs;
  const callDeadline = effectiveTimeout === undefined ? undefined : callStart + effectiveTimeout;
  const info: CallInfo = { path: pathOf(methodName), headers };
  const retry = new CallRetry(
    {
      throttle: ctx.retryThrottle,
      pool: ctx.retryBuffer,
      random,
      untilMessage: ctx.retryAfterResponseHeaders === true,
    },
    replay === undefined,
    replay,
  );
  let faultChecked = false;
  let failed = true;
  try {
    for (let first = true; ; first = false) {
      const start = first ? callStart : performance.now();
      let picked: Picked;
      try {
        if (signal?.aborted)
          throw ConnectError.from(signal.reason ?? new Error("the call was cancelled"), Code.Canceled);
        const now = tryPick(ctx.state, info);
        if (info.route !== undefined) info.routedAt ??= first ? callStart : performance.now();
        if (now instanceof ConnectError) throw now;
        picked = now ?? (await pickWaiting(ctx.state, info, signal, callDeadline));
      } catch (error) {
        ctx.metrics?.addCounter(CallMetricName.attemptStarted, 1, {
          "grpc.method": methodName,
          "grpc.target": ctx.target,
        });
        new Attempt(ctx, methodName, callStart, start, undefined).end(ConnectError.from(error).code, new Headers());
        throw error;
      }
      // A31: the route's max stream duration caps the call's own deadline.
      const deadlineAt = routeDeadline(callDeadline, info);
      // A33: once per call, before anything is sent; a delayed call picks again afterwards.
      if (!faultChecked && info.route !== undefined && info.route.filters.length > 0) {
        faultChecked = true;
        const fault = routeFault(info.route, headers, random);
        if (fault !== undefined) {
          picked.pick.tracker?.onPickDiscarded?.();
          ctx.state.release(picked.entry);
          if (fault instanceof ConnectError) {
            new Attempt(ctx, methodName, callStart, start, undefined).end(fault.code, new Headers());
            throw fault;
          }
          try {
            if (fault.delayMs !== undefined) await callSleep(fault.delayMs, signal, deadlineAt);
            if (fault.abortCode !== undefined) throw faultAbortError(fault.abortCode);
          } catch (error) {
            new Attempt(ctx, methodName, callStart, start, undefined).end(ConnectError.from(error).code, new Headers());
            throw error;
          } finally {
            fault.end();
          }
          continue;
        }
      }
      retry.begin(info.route);
      ctx.metrics?.addCounter(CallMetricName.attemptStarted, 1, {
        "grpc.method": methodName,
        "grpc.target": ctx.target,
      });
      const attempt = new Attempt(ctx, methodName, callStart, start, picked, retry.counts);
      retry.attemptStarted(attempt.counter);
      picked.pick.tracker?.onCallStarted?.();
      let remaining: number | undefined;
      if (deadlineAt !== undefined) {
        remaining = deadlineAt - performance.now();
        if (remaining <= 0) {
          const error = new ConnectError("deadline exceeded before the call was sent", Code.DeadlineExceeded);
          attempt.end(error.code, new Headers());
          throw error;
        }
        remaining = Math.max(1, Math.floor(remaining));
      }
      let response: R;
      try {
        const transport = transportOf(picked.pick.subchannel);
        response = await (attempt.counter === undefined
          ? send(transport, remaining)
          : countingBytes(attempt.counter, () => send(transport, remaining)));
      } catch (error) {
        const step = retry.failed(error, attempt.counter, signal?.aborted === true);
        if (step.kind === "transparent") {
          const connectError = ConnectError.from(error);
          attempt.end(connectError.code, connectError.metadata, false);
          continue;
        }
        attempt.end(step.failure.code, step.failure.metadata, step.kind === "fail");
        if (step.kind === "fail") throw step.error;
        // A6: a retry tells the server how many attempts came before it.
        headers.set(PREVIOUS_ATTEMPTS_HEADER, String(retry.attempts));
        try {
          await callSleep(step.delayMs, signal, deadlineAt);
        } catch (stop) {
          new Attempt(ctx, methodName, callStart, performance.now(), undefined).end(
            ConnectError.from(stop).code,
            new Headers(),
          );
          throw stop;
        }
        continue;
      }
      // A unary response is the call's outcome; a stream's response headers commit it (A6).
      retry.succeeded();
      failed = false;
      return onResponse(response, attempt);
    }
  } finally {
    retry.end(failed);
  }
}

const PREVIOUS_ATTEMPTS_HEADER = "grpc-previous-rpc-attempts";

export type { Attempt };

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
