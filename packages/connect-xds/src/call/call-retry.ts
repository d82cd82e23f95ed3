// What one call keeps so a failed attempt can be made again, and the decision after each failed attempt (A6's
// transparent retry and commit rule, A44's retry policy): the route's retry state, the call's share of the retry
// buffer and, for a streaming call, its request messages (request-replay.ts). See docs/decisions.md#policies-retry.
import { Code, ConnectError } from "@connectrpc/connect";
import type { RouteSelection } from "../balancer/config-selector.js";
import { NOT_SENT } from "../connections/connection.js";
import type { MessageByteCounter } from "../grpc/message-bytes.js";
import { routeRetryState } from "../policies/call-policies.js";
import type { RetryBufferPool, RetryCallBuffer } from "../policies/retry-buffer.js";
import type { RetryState } from "../policies/retry-state.js";
import type { RetryThrottle } from "../policies/retry-throttle.js";
import type { RequestReplay } from "./request-replay.js";

/** How many times a call that never reached a server is sent again (gRPC's transparent retry, A6). */
const TRANSPARENT_RETRIES = 3;

const REFUSED = /REFUSED_STREAM/;
const PUSHBACK_HEADER = "grpc-retry-pushback-ms";

/** Whether a failed attempt never reached the server: our connection refused to open the stream, or the server did. */
function neverSent(error: unknown): boolean {
  if ((error as { [NOT_SENT]?: boolean } | undefined)?.[NOT_SENT] === true) return true;
  if (!(error instanceof Error)) return false;
  const cause = (error as { cause?: unknown }).cause;
  return REFUSED.test(error.message) || (cause instanceof Error && REFUSED.test(cause.message));
}

export interface CallRetryOptions {
  readonly throttle: RetryThrottle | undefined;
  readonly pool: RetryBufferPool | undefined;
  readonly random: () => number;
  /** The transport's retryAfterResponseHeaders: unary attempts are committed by a message, not by headers. */
  readonly untilMessage: boolean;
}

export type RetryStep =
  /** Pick and send again at once, not counted as an attempt (it never reached a server). */
  | { readonly kind: "transparent" }
  /** Pick and send again after `delayMs` (the policy's backoff or the server's pushback). */
  | { readonly kind: "retry"; readonly delayMs: number; readonly failure: ConnectError }
  /** The call fails: `failure` for the attempt's records, `error` to throw. */
  | { readonly kind: "fail"; readonly failure: ConnectError; readonly error: unknown };

export class CallRetry {
  private policy: RetryState | undefined;
  private buffer: RetryCallBuffer | undefined;
  private transparent = 0;
  private begun = false;

  constructor(
    private readonly options: CallRetryOptions,
    private readonly unary: boolean,
    /** A streaming call's request messages; undefined for a unary call (its one message is held by the caller). */
    private readonly replay: RequestReplay<unknown> | undefined,
  ) {}

  /** At the call's first attempt: the route's retry policy, and a retry buffer when anything may be sent again. */
  begin(route: RouteSelection | undefined): void {
    if (this.begun) return;
    this.begun = true;
    this.policy = routeRetryState(route, this.options.throttle, this.options.random);
    if (this.policy !== undefined || this.replay !== undefined) this.buffer = this.options.pool?.open();
  }

  /** Whether attempts need a byte counter (the retry buffer reads it, the commit rule reads its headers). */
  get counts(): boolean {
    return this.policy !== undefined || this.buffer !== undefined;
  }

  /** Attempts counted so far (the first is 1); what `grpc-previous-rpc-attempts` says on a retry. */
  get attempts(): number {
    return this.policy?.attempts ?? 1;
  }

  attemptStarted(counter: MessageByteCounter | undefined): void {
    this.policy?.attemptStarted();
    const buffer = this.buffer;
    if (buffer === undefined || counter === undefined) return;
    // A6: the request bytes are reserved once, as the first attempt sends them; a retry sends the same bytes again.
    counter.onSent = (total) => {
      if (this.buffer !== buffer || total <= buffer.usedBytes) return;
      if (!buffer.reserve(total - buffer.usedBytes)) this.commit();
    };
  }

  /** No further attempt: the server started answering, or the request outgrew the retry buffer. */
  commit(): void {
    this.policy?.commit();
    this.replay?.commit();
    this.buffer?.release();
    this.buffer = undefined;
  }

  /**
   * The attempt's response arrived: it is the call's. A unary call succeeded (recorded on the retry throttle); a
   * stream's headers only commit it.
   */
  succeeded(): void {
    this.commit();
    if (this.unary) this.policy?.attemptEnded(0, null);
  }

  /** Decides what follows a failed attempt; `aborted`: the caller cancelled. */
  failed(error: unknown, counter: MessageByteCounter | undefined, aborted: boolean): RetryStep {
    const connectError = ConnectError.from(error);
    const replayable = this.unary || this.replay?.committed === false;
    const notSent = replayable && neverSent(error);
    if (notSent && this.transparent < TRANSPARENT_RETRIES && !aborted) {
      this.transparent++;
      // Not counted as a policy attempt: it never reached a server (A6's transparent retry).
      this.policy?.forgetAttempt();
      return { kind: "transparent" };
    }
    const failure = notSent
      ? new ConnectError(connectError.rawMessage, Code.Unavailable, connectError.metadata, undefined, error)
      : connectError;
    if (this.committedBy(counter)) this.commit();
    const decision = this.policy?.attemptEnded(failure.code, failure.metadata.get(PUSHBACK_HEADER));
    if (decision?.retry === true && !aborted && this.replay?.committed !== true) {
      return { kind: "retry", delayMs: decision.delayMs, failure };
    }
    return { kind: "fail", failure, error: notSent ? failure : error };
  }

  /** The call ends (its attempt committed or it failed): the buffer goes back; a failed call lets its input go. */
  end(failed: boolean): void {
    this.buffer?.release();
    this.buffer = undefined;
    if (failed) this.replay?.close();
  }

  /**
   * A6: an attempt is committed once the server sent response headers (a Trailers-Only response does not count), or,
   * for unary calls with `untilMessage`, once it began a response message.
   */
  private committedBy(counter: MessageByteCounter | undefined): boolean {
    if (counter === undefined) return false;
    return this.unary && this.options.untilMessage ? counter.responseMessages > 0 : counter.responseHeaders;
  }
}
