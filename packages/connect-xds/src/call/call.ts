// The per-call path (docs/architecture.md#connect-xds-the-call-path): wait for a config selector, select the route,
// pick from the cluster's picker (waiting while it queues: call-pick.ts), apply the route's fault filter, send the
// call on the picked connection's transport and, when it ends, tell the pick's tracker (LRS, policies) and record the
// A66 metrics (call-attempt.ts). A failed attempt is made again as call-retry.ts decides. A call that can be picked at
// once does not await anything before reaching connect-node.
import type { DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError, type StreamResponse, type Transport, type UnaryResponse } from "@connectrpc/connect";
import type { RouteSelection } from "../balancer/config-selector.js";
import type { Subchannel } from "../balancer/lb-policy.js";
import { countingBytes } from "../grpc/message-bytes.js";
import { callSleep, faultAbortError, routeFault } from "../policies/call-policies.js";
import { PooledSubchannel } from "../subchannels/subchannel-pool.js";
import { Attempt } from "./call-attempt.js";
import type { CallContext } from "./call-context.js";
import { type CallInfo, type Picked, pickWaiting, routeDeadline, tryPick } from "./call-pick.js";
import { CallRetry } from "./call-retry.js";
import { CallMetricName } from "./metrics.js";
import type { RequestReplay } from "./request-replay.js";

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

/** One call as its attempts see it. `failed` stays true until an attempt's response is the call's outcome. */
interface RunningCall {
  readonly ctx: CallContext;
  readonly methodName: string;
  readonly callStart: number;
  readonly callDeadline: number | undefined;
  readonly signal: AbortSignal | undefined;
  readonly info: CallInfo;
  readonly retry: CallRetry;
  readonly random: () => number;
  failed: boolean;
}

/** A66: one more attempt started. */
function countAttempt(call: RunningCall): void {
  call.ctx.metrics?.addCounter(CallMetricName.attemptStarted, 1, {
    "grpc.method": call.methodName,
    "grpc.target": call.ctx.target,
  });
}

/** Ends an attempt that was never sent (no pick, a fault, a backoff cut short) with `error`'s code. */
function endUnsent(call: RunningCall, start: number, error: unknown): void {
  new Attempt(call.ctx, call.methodName, call.callStart, start, undefined).end(
    ConnectError.from(error).code,
    new Headers(),
  );
}

/** The next attempt's pick: at once when the picker has one, else once a change brings one. */
async function pickAttempt(call: RunningCall, first: boolean, start: number): Promise<Picked> {
  const { ctx, info, signal } = call;
  try {
    if (signal?.aborted) throw ConnectError.from(signal.reason ?? new Error("the call was cancelled"), Code.Canceled);
    const now = tryPick(ctx.state, info);
    if (info.route !== undefined) info.routedAt ??= first ? call.callStart : performance.now();
    if (now instanceof ConnectError) throw now;
    return now ?? (await pickWaiting(ctx.state, info, signal, call.callDeadline));
  } catch (error) {
    countAttempt(call);
    endUnsent(call, start, error);
    throw error;
  }
}

/**
 * A33: the route's fault filter, once per call, before anything is sent. False: no fault, send. True: the call was
 * delayed and picks again. Throws the fault's abort.
 */
async function applyFault(
  call: RunningCall,
  route: RouteSelection,
  picked: Picked,
  start: number,
  deadlineAt: number | undefined,
): Promise<boolean> {
  const fault = routeFault(route, call.info.headers, call.random);
  if (fault === undefined) return false;
  picked.pick.tracker?.onPickDiscarded?.();
  call.ctx.state.release(picked.entry);
  if (fault instanceof ConnectError) {
    endUnsent(call, start, fault);
    throw fault;
  }
  try {
    if (fault.delayMs !== undefined) await callSleep(fault.delayMs, call.signal, deadlineAt);
    if (fault.abortCode !== undefined) throw faultAbortError(fault.abortCode);
  } catch (error) {
    endUnsent(call, start, error);
    throw error;
  } finally {
    fault.end();
  }
  return true;
}

/** What `sendAttempt` returns when the call makes another attempt. */
const AGAIN = Symbol("again");

/**
 * Sends one attempt on its pick's transport. Its response is the call's outcome (`onResponse` wraps a stream so the
 * attempt ends with its messages). A failure is retried as the call's retry decides: AGAIN at once when it never
 * reached a server (A6's transparent retry), AGAIN after the policy's backoff when it failed with a code of the
 * route's retry policy and was not committed (A44); otherwise the call fails.
 */
async function sendAttempt<R>(
  call: RunningCall,
  picked: Picked,
  start: number,
  deadlineAt: number | undefined,
  send: Send<R>,
  onResponse: (response: R, attempt: Attempt) => R,
): Promise<R | typeof AGAIN> {
  const { ctx, retry, signal } = call;
  retry.begin(call.info.route);
  countAttempt(call);
  const attempt = new Attempt(ctx, call.methodName, call.callStart, start, picked, retry.counts);
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
      return AGAIN;
    }
    attempt.end(step.failure.code, step.failure.metadata, step.kind === "fail");
    if (step.kind === "fail") throw step.error;
    // A6: a retry tells the server how many attempts came before it.
    call.info.headers.set(PREVIOUS_ATTEMPTS_HEADER, String(retry.attempts));
    try {
      await callSleep(step.delayMs, signal, deadlineAt);
    } catch (stop) {
      endUnsent(call, performance.now(), stop);
      throw stop;
    }
    return AGAIN;
  }
  // A unary response is the call's outcome; a stream's response headers commit it (A6).
  retry.succeeded();
  call.failed = false;
  return onResponse(response, attempt);
}

/**
 * Runs one call: routing and picking, the route's fault filter (A33), then `send` on the picked endpoint's
 * transport, attempt after attempt as `sendAttempt` decides. A streaming call's request messages come from `replay`,
 * kept until the call is committed.
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
  const call: RunningCall = {
    ctx,
    methodName,
    callStart,
    callDeadline: effectiveTimeout === undefined ? undefined : callStart + effectiveTimeout,
    signal,
    info: { path: pathOf(methodName), headers },
    retry,
    random,
    failed: true,
  };
  let faultChecked = false;
  try {
    for (let first = true; ; first = false) {
      const start = first ? callStart : performance.now();
      const picked = await pickAttempt(call, first, start);
      // A31: the route's max stream duration caps the call's own deadline.
      const deadlineAt = routeDeadline(call.callDeadline, call.info);
      const route = call.info.route;
      if (!faultChecked && route !== undefined && route.filters.length > 0) {
        faultChecked = true;
        if (await applyFault(call, route, picked, start, deadlineAt)) continue;
      }
      const outcome = await sendAttempt(call, picked, start, deadlineAt, send, onResponse);
      if (outcome !== AGAIN) return outcome;
    }
  } finally {
    retry.end(call.failed);
  }
}

const PREVIOUS_ATTEMPTS_HEADER = "grpc-previous-rpc-attempts";
