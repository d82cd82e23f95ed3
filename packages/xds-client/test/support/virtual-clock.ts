import type { Clock } from "../../src/internal.js";

/** A clock whose timers run only when told, synchronously: for code under test that awaits nothing. */
export interface ManualClock extends Clock {
  /** Runs the earliest timer due by `end`, the time moved to its due time; false when there is none. */
  runNext(end: number): boolean;
  /** Runs every timer due within `ms`, in due order, then moves the time to the end. */
  advanceNow(ms: number): void;
  /** Due times of pending timers, relative to now. */
  pending(): number[];
}

export function createManualClock(start = 1_700_000_000_000): ManualClock {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { due: number; callback: () => void }>();
  const clock: ManualClock = {
    now: () => now,
    setTimeout(callback, ms) {
      seq += 1;
      timers.set(seq, { due: now + Math.max(0, ms), callback });
      return seq;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    pending: () => [...timers.values()].map((t) => t.due - now).sort((a, b) => a - b),
    runNext(end) {
      let next: [number, { due: number; callback: () => void }] | undefined;
      for (const entry of timers) if (entry[1].due <= end && (!next || entry[1].due < next[1].due)) next = entry;
      if (!next) return false;
      timers.delete(next[0]);
      now = next[1].due;
      next[1].callback();
      return true;
    },
    advanceNow(ms) {
      const end = now + ms;
      while (clock.runNext(end));
      now = end;
    },
  };
  return clock;
}

/** A clock that moves only when told; timers fire in due order, with pending promise jobs run between them. */
export interface VirtualClock extends Clock {
  advance(ms: number): Promise<void>;
  /** Due times of pending timers, relative to now. */
  pending(): number[];
}

export function createVirtualClock(start = 1_700_000_000_000): VirtualClock {
  const clock = createManualClock(start);
  const settle = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    now: clock.now,
    setTimeout: clock.setTimeout,
    clearTimeout: clock.clearTimeout,
    pending: clock.pending,
    async advance(ms) {
      const end = clock.now() + ms;
      await settle();
      while (clock.runNext(end)) await settle();
      // No timer is due by `end`: this only moves the time.
      clock.advanceNow(end - clock.now());
      await settle();
    },
  };
}
