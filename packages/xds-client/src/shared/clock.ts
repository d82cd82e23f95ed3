import { clearLongTimer, type LongTimer, setLongTimeout } from "./long-timer.js";

/** Time and randomness, injected so tests can run on a virtual clock (see `./internal`). */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Node's clock; delays of any length, such as a connect deadline from the options (docs/decisions.md#long-timers). */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => {
    const handle = setLongTimeout(callback, ms);
    // A pending xDS timer must never keep the process alive on its own (the client's watches do: process-hold.ts).
    handle.unref();
    return handle;
  },
  clearTimeout: (handle) => clearLongTimer(handle as LongTimer | undefined),
};

/** Exponential backoff (gRPC connection backoff): 1 s, ×1.6 per attempt, ±20 % jitter, capped at 120 s. */
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

export function createBackoff(random: () => number, options: BackoffOptions = {}): Backoff {
  const initial = options.initialMs ?? 1_000;
  const multiplier = options.multiplier ?? 1.6;
  const jitter = options.jitter ?? 0.2;
  const max = options.maxMs ?? 120_000;
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
