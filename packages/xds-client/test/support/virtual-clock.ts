import type { Clock } from "../../src/internal.js";

/** A clock that moves only when told; timers fire in due order, with pending promise jobs run between them. */
export interface VirtualClock extends Clock {
  advance(ms: number): Promise<void>;
  /** Due times of pending timers, relative to now. */
  pending(): number[];
}

export function createVirtualClock(start = 1_700_000_000_000): VirtualClock {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { due: number; callback: () => void }>();
  const settle = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return {
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
    async advance(ms) {
      const end = now + ms;
      await settle();
      for (;;) {
        let next: [number, { due: number; callback: () => void }] | undefined;
        for (const entry of timers) if (entry[1].due <= end && (!next || entry[1].due < next[1].due)) next = entry;
        if (!next) break;
        timers.delete(next[0]);
        now = next[1].due;
        next[1].callback();
        await settle();
      }
      now = end;
      await settle();
    },
  };
}
