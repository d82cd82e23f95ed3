// Timers for durations of any length (docs/decisions.md#long-timers). Node's timers take at most 2^31-1 ms (about
// 24.8 days): a longer delay fires after 1 ms, with a TimeoutOverflowWarning. Every delay that comes from
// configuration, from xDS, from a peer or from a caller goes through setLongTimeout / setLongInterval, which wait
// past that limit in steps of at most the limit. An infinite delay never fires and holds nothing.
// This file is the same in every package that sets such timers (no package depends on another for it);
// tools/scripts/test/long-timer-copies.test.ts keeps the copies identical.

/** The longest delay Node's timers take. */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** A timer from setLongTimeout or setLongInterval: Node's own below the limit, a chain of steps above it. */
export type LongTimer = ReturnType<typeof setTimeout> | ChainedTimer;

/** The part of Node's Timeout a long timer has: ref'd unless unref'd, like Node's. */
export interface ChainedTimer {
  unref(): ChainedTimer;
  ref(): ChainedTimer;
  hasRef(): boolean;
  /** Steps of at most MAX_TIMER_DELAY_MS armed so far (1 for a pending delay past the limit; 0: never fires). */
  readonly steps: number;
}

const chains = new WeakMap<object, () => void>();

/** A delay Node takes as it is: NaN and negative ones are 0. */
function delayOf(ms: number): number {
  return Number.isNaN(ms) ? 0 : Math.max(ms, 0);
}

/** Calls `callback` after `delayMs` (every `delayMs` when `repeat`) through steps of at most the limit. */
function chain(callback: () => void, delayMs: number, repeat: boolean): ChainedTimer {
  let left = delayMs;
  let step: ReturnType<typeof setTimeout> | undefined;
  let steps = 0;
  let referenced = true;
  let cancelled = false;
  const handle: ChainedTimer = {
    unref() {
      referenced = false;
      step?.unref();
      return handle;
    },
    ref() {
      referenced = true;
      step?.ref();
      return handle;
    },
    hasRef: () => referenced && step !== undefined,
    get steps() {
      return steps;
    },
  };
  const arm = () => {
    const wait = Math.min(left, MAX_TIMER_DELAY_MS);
    step = setTimeout(onStep, wait);
    if (!referenced) step.unref();
    steps++;
  };
  const onStep = () => {
    left -= Math.min(left, MAX_TIMER_DELAY_MS);
    if (left > 0) {
      arm();
      return;
    }
    if (repeat) {
      left = delayMs;
      arm();
    } else {
      step = undefined;
    }
    if (!cancelled) callback();
  };
  chains.set(handle, () => {
    cancelled = true;
    if (step !== undefined) clearTimeout(step);
    step = undefined;
  });
  if (Number.isFinite(delayMs)) arm();
  return handle;
}

/** setTimeout for any `delayMs`: Infinity never fires; NaN and negative delays are 0. */
export function setLongTimeout(callback: () => void, delayMs: number): LongTimer {
  const delay = delayOf(delayMs);
  return delay <= MAX_TIMER_DELAY_MS ? setTimeout(callback, delay) : chain(callback, delay, false);
}

/** setInterval for any `intervalMs`: Infinity never fires; NaN and negative intervals are 0. */
export function setLongInterval(callback: () => void, intervalMs: number): LongTimer {
  const interval = delayOf(intervalMs);
  return interval <= MAX_TIMER_DELAY_MS ? setInterval(callback, interval) : chain(callback, interval, true);
}

/** Cancels a timer of setLongTimeout or setLongInterval (undefined, or one that already fired: nothing to do). */
export function clearLongTimer(timer: LongTimer | undefined): void {
  if (timer === undefined) return;
  const cancel = chains.get(timer);
  if (cancel !== undefined) cancel();
  else clearTimeout(timer as ReturnType<typeof setTimeout>);
}
