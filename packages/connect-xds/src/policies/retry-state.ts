// Per-call retry decisions (A44 over gRPC's A6 rules): retryable codes, attempts capped at 5, exponential backoff
// with ±20 % jitter, server pushback, commitment and the channel's retry throttle. See docs/decisions.md#policies-retry.

import type { RetryPolicy } from "@xdskit/xds-client";
import type { RetryThrottle } from "./retry-throttle.js";

/** gRPC's client-side limit on attempts (A6): larger `num_retries + 1` values are treated as this. */
export const MAX_ATTEMPTS_CAP = 5;

/** The gRPC status code of each retryable code name (Connect's Code values are the same numbers). */
export const RETRYABLE_CODE_NUMBERS: Readonly<Record<RetryPolicy["retryOn"][number], number>> = Object.freeze({
  CANCELLED: 1,
  DEADLINE_EXCEEDED: 4,
  RESOURCE_EXHAUSTED: 8,
  INTERNAL: 13,
  UNAVAILABLE: 14,
});

export type RetryDecision =
  | { readonly retry: true; readonly delayMs: number }
  | {
      readonly retry: false;
      readonly reason: "ok" | "not_retryable" | "throttled" | "committed" | "attempts_exhausted" | "pushback";
    };

export interface RetryState {
  /** Attempts started so far (the first is 1). */
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly committed: boolean;
  /** No further attempt will be made: response headers arrived, or the request outgrew the retry buffer. */
  commit(): void;
  /** An attempt is starting (the first or a retry). */
  attemptStarted(): void;
  /** The last attempt never reached a server and is made again transparently: it does not count (A6). */
  forgetAttempt(): void;
  /**
   * The current attempt ended with gRPC status `code`; `pushback` is its `grpc-retry-pushback-ms` trailer (null
   * when absent). Records the outcome on the throttle and says whether, and after how long, to retry.
   */
  attemptEnded(code: number, pushback: string | null): RetryDecision;
}

export interface RetryStateOptions {
  readonly throttle?: RetryThrottle | undefined;
  /** [0, 1); the jitter draw. */
  readonly random?: () => number;
  /** The client's attempt cap (default 5). */
  readonly maxAttemptsCap?: number;
}

const PUSHBACK = /^(0|[1-9][0-9]*)$/;

/** A6: a non-negative decimal int32 without leading zeros; anything else (negative, garbage) means "do not retry". */
export function parsePushbackMs(value: string): number | undefined {
  if (!PUSHBACK.test(value)) return undefined;
  const ms = Number(value);
  return ms <= 0x7fff_ffff ? ms : undefined;
}

export function createRetryState(policy: RetryPolicy, options: RetryStateOptions = {}): RetryState {
  const random = options.random ?? Math.random;
  const throttle = options.throttle;
  const maxAttempts = Math.min(policy.numRetries + 1, options.maxAttemptsCap ?? MAX_ATTEMPTS_CAP);
  let retryable = 0;
  for (const name of policy.retryOn) retryable |= 1 << RETRYABLE_CODE_NUMBERS[name];
  let attempts = 0;
  let committed = false;
  let nextBackoffMs = policy.baseIntervalMs;
  return {
    get attempts() {
      return attempts;
    },
    maxAttempts,
    get committed() {
      return committed;
    },
    commit() {
      committed = true;
    },
    attemptStarted() {
      attempts++;
    },
    forgetAttempt() {
      if (attempts > 0) attempts--;
    },
    attemptEnded(code, pushback) {
      if (code === 0) {
        throttle?.recordSuccess();
        return { retry: false, reason: "ok" };
      }
      if ((retryable & (1 << code)) === 0 || code > 16) return { retry: false, reason: "not_retryable" };
      if (throttle !== undefined && !throttle.recordFailure()) return { retry: false, reason: "throttled" };
      if (committed) return { retry: false, reason: "committed" };
      if (attempts >= maxAttempts) return { retry: false, reason: "attempts_exhausted" };
      if (pushback !== null) {
        const ms = parsePushbackMs(pushback.trim());
        if (ms === undefined) return { retry: false, reason: "pushback" };
        nextBackoffMs = policy.baseIntervalMs;
        return { retry: true, delayMs: ms };
      }
      const delayMs = nextBackoffMs * (0.8 + 0.4 * random());
      nextBackoffMs = Math.min(nextBackoffMs * 2, policy.maxIntervalMs);
      return { retry: true, delayMs };
    },
  };
}
