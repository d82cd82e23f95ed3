// A clock whose time moves only when a test says so; timers fire in due order as it advances.
import type { Clock } from "../../src/index.js";

export interface VirtualClock extends Clock {
  /** Moves time forward, firing every timer due on the way (timers they set too). */
  advance(ms: number): void;
  /** Delays of the pending timers, relative to now, soonest first. */
  pending(): number[];
}

export function createVirtualClock(start = 1_000_000): VirtualClock {
  let now = start;
  let nextId = 0;
  const timers = new Map<number, { at: number; callback: () => void }>();
  const due = () => {
    let best: [number, { at: number; callback: () => void }] | undefined;
    for (const entry of timers) if (best === undefined || entry[1].at < best[1].at) best = entry;
    return best;
  };
  return {
    now: () => now,
    setTimeout(callback, ms) {
      const id = ++nextId;
      timers.set(id, { at: now + Math.max(0, ms), callback });
      return id;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      const target = now + ms;
      for (let next = due(); next !== undefined && next[1].at <= target; next = due()) {
        timers.delete(next[0]);
        now = next[1].at;
        next[1].callback();
      }
      now = target;
    },
    pending: () => [...timers.values()].map((t) => t.at - now).sort((a, b) => a - b),
  };
}
