import { clearLongTimer, type LongTimer, setLongTimeout } from "./long-timer.js";

/** Time, injected so interval arithmetic can be tested on a virtual clock. */
export interface Clock {
  /** Milliseconds; only differences are used. */
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Node's clock; delays of any length, including the server's load-reporting interval (docs/decisions.md#long-timers). */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (callback, ms) => {
    const handle = setLongTimeout(callback, ms);
    // A report or retry timer must never keep the process alive on its own.
    handle.unref();
    return handle;
  },
  clearTimeout: (handle) => clearLongTimer(handle as LongTimer | undefined),
};

/** gRPC connection backoff: 1 s, x1.6 per attempt, +-20 % jitter, capped at 120 s. */
export interface BackoffOptions {
  readonly initialMs?: number;
  readonly multiplier?: number;
  readonly jitter?: number;
  readonly maxMs?: number;
}

export interface Backoff {
  /** The delay before the next attempt; grows with each call until `reset()`. */
  next(): number;
  reset(): void;
}

export function createBackoff(options: BackoffOptions = {}, random: () => number = Math.random): Backoff {
  const initial = options.initialMs ?? 1_000;
  const multiplier = options.multiplier ?? 1.6;
  const jitter = options.jitter ?? 0.2;
  const max = options.maxMs ?? 120_000;
  for (const [name, value] of Object.entries({ initial, multiplier, max })) {
    if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`backoff ${name} must be a positive number`);
  }
  if (!(jitter >= 0 && jitter < 1)) throw new RangeError("backoff jitter must be in [0, 1)");
  let current = initial;
  return {
    next() {
      const delay = current * (1 + jitter * (random() * 2 - 1));
      current = Math.min(current * multiplier, max);
      return Math.max(0, Math.round(delay));
    },
    reset() {
      current = initial;
    },
  };
}
