import type { RetryPolicy } from "@xdskit/xds-client";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRetryBufferPool } from "./retry-buffer.js";
import { createRetryState, parsePushbackMs } from "./retry-state.js";
import { createRetryThrottle } from "./retry-throttle.js";

const UNAVAILABLE = 14;
const INVALID_ARGUMENT = 3;
const policy: RetryPolicy = {
  retryOn: ["UNAVAILABLE", "CANCELLED"],
  numRetries: 3,
  baseIntervalMs: 100,
  maxIntervalMs: 300,
};

/** Runs attempts that all fail with `code` until the state says stop; returns the delays it asked for. */
function failAll(state: ReturnType<typeof createRetryState>, code: number) {
  const delays: number[] = [];
  for (;;) {
    state.attemptStarted();
    const d = state.attemptEnded(code, null);
    if (!d.retry) return { delays, reason: d.reason };
    delays.push(d.delayMs);
  }
}

describe("retry state (A44/A6)", () => {
  it("retries a retryable code num_retries times with backoff doubling to max_interval, jittered ±20 %", () => {
    const low = failAll(createRetryState(policy, { random: () => 0 }), UNAVAILABLE);
    expect(low).toEqual({ delays: [80, 160, 240], reason: "attempts_exhausted" });
    const high = failAll(createRetryState(policy, { random: () => 0.999999 }), UNAVAILABLE);
    expect(high.delays.map(Math.round)).toEqual([120, 240, 360]);
  });

  it("does not retry OK, codes outside retry_on, or a committed call", () => {
    const s = createRetryState(policy);
    s.attemptStarted();
    expect(s.attemptEnded(0, null)).toEqual({ retry: false, reason: "ok" });
    expect(failAll(createRetryState(policy), INVALID_ARGUMENT).reason).toBe("not_retryable");
    const committed = createRetryState(policy);
    committed.commit();
    expect(failAll(committed, UNAVAILABLE)).toEqual({ delays: [], reason: "committed" });
  });

  it("caps attempts at 5 whatever num_retries says", () => {
    const s = createRetryState({ ...policy, numRetries: 10 }, { random: () => 0.5 });
    expect(s.maxAttempts).toBe(5);
    expect(failAll(s, UNAVAILABLE).delays).toHaveLength(4);
  });

  it("follows server pushback exactly, resets the backoff after it, and stops on a negative or bad value", () => {
    const s = createRetryState(policy, { random: () => 0.5 });
    s.attemptStarted();
    expect(s.attemptEnded(UNAVAILABLE, null)).toEqual({ retry: true, delayMs: 100 });
    s.attemptStarted();
    expect(s.attemptEnded(UNAVAILABLE, "7")).toEqual({ retry: true, delayMs: 7 });
    s.attemptStarted();
    expect(s.attemptEnded(UNAVAILABLE, null)).toEqual({ retry: true, delayMs: 100 });
    const stop = createRetryState(policy);
    stop.attemptStarted();
    expect(stop.attemptEnded(UNAVAILABLE, "-1")).toEqual({ retry: false, reason: "pushback" });
    expect(parsePushbackMs("007")).toBeUndefined();
    expect(parsePushbackMs("abc")).toBeUndefined();
    expect(parsePushbackMs("2147483648")).toBeUndefined();
    expect(parsePushbackMs("0")).toBe(0);
  });

  it("consults the throttle: a throttled failure is not retried", () => {
    const throttle = createRetryThrottle({ maxTokens: 4, tokenRatio: 0.5 });
    const s = createRetryState(policy, { throttle, random: () => 0.5 });
    // 4 → 3 tokens (> 2): retry; 3 → 2 (not > 2): throttled.
    expect(failAll(s, UNAVAILABLE)).toEqual({ delays: [100], reason: "throttled" });
  });

  it("property: never more than min(num_retries + 1, 5) attempts, every delay within the jittered bounds", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 0, max: 5000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (numRetries, base, extra, r) => {
          const p = { ...policy, numRetries, baseIntervalMs: base, maxIntervalMs: base + extra };
          const s = createRetryState(p, { random: () => r });
          const { delays } = failAll(s, UNAVAILABLE);
          return (
            s.attempts === Math.min(numRetries + 1, 5) &&
            delays.every((d, i) => {
              const nominal = Math.min(base * 2 ** i, base + extra);
              return d >= nominal * 0.8 - 1e-9 && d <= nominal * 1.2 + 1e-9;
            })
          );
        },
      ),
    );
  });
});

describe("retry throttle (A6)", () => {
  it("validates its config", () => {
    expect(() => createRetryThrottle({ maxTokens: 0, tokenRatio: 1 })).toThrow(/maxTokens/);
    expect(() => createRetryThrottle({ maxTokens: 1001, tokenRatio: 1 })).toThrow(/maxTokens/);
    expect(() => createRetryThrottle({ maxTokens: 10, tokenRatio: 0.0001 })).toThrow(/tokenRatio/);
  });

  it("counts in thousandths, drops decimals past the third, and caps at maxTokens", () => {
    const t = createRetryThrottle({ maxTokens: 10, tokenRatio: 0.5466 });
    for (let i = 0; i < 6; i++) t.recordFailure();
    expect(t.tokens).toBe(4);
    t.recordSuccess();
    expect(t.tokens).toBeCloseTo(4.546, 10);
    for (let i = 0; i < 100; i++) t.recordSuccess();
    expect(t.tokens).toBe(10);
  });

  it("property: retries allowed exactly while tokens stay above half of maxTokens", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.array(fc.boolean(), { maxLength: 60 }),
        (maxTokens, outcomes) => {
          const t = createRetryThrottle({ maxTokens, tokenRatio: 0.25 });
          let model = maxTokens * 1000;
          return outcomes.every((ok) => {
            if (ok) {
              t.recordSuccess();
              model = Math.min(maxTokens * 1000, model + 250);
              return true;
            }
            const allowed = t.recordFailure();
            model = Math.max(0, model - 1000);
            return allowed === model > (maxTokens * 1000) / 2;
          });
        },
      ),
    );
  });
});

describe("retry buffer (A6)", () => {
  it("refuses what passes the per-call or the channel limit and frees a call's bytes once", () => {
    const pool = createRetryBufferPool({ perCallBytes: 100, totalBytes: 150 });
    expect(() => createRetryBufferPool({ perCallBytes: -1 })).toThrow(/perCallBytes/);
    const a = pool.open();
    const b = pool.open();
    expect(a.reserve(60)).toBe(true);
    expect(a.reserve(41)).toBe(false);
    expect(b.reserve(91)).toBe(false);
    expect(b.reserve(90)).toBe(true);
    expect(pool.usedBytes).toBe(150);
    a.release();
    a.release();
    expect(pool.usedBytes).toBe(90);
    expect(a.reserve(1)).toBe(false);
  });
});
