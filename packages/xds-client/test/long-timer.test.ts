// The long-timer helper (src/shared/long-timer.ts), the same test in every package that has a copy of it: on vitest's fake
// clock, which overflows past 2^31-1 ms as Node does, a 30-day and a 10,000-year delay fire when due and not before;
// on the real clock, a 30-day timer waits without firing and without a TimeoutOverflowWarning.
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type ChainedTimer,
  clearLongTimer,
  MAX_TIMER_DELAY_MS,
  setLongInterval,
  setLongTimeout,
} from "../src/shared/long-timer.js";

const DAY_MS = 24 * 60 * 60 * 1000;

describe("long timers", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("fires a 30-day timeout after 30 days, not before", () => {
    vi.useFakeTimers();
    const fired = vi.fn();
    setLongTimeout(fired, 30 * DAY_MS);
    vi.advanceTimersByTime(30 * DAY_MS - 1);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(60 * DAY_MS);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it("repeats a 30-day interval every 30 days, until cleared", () => {
    vi.useFakeTimers();
    const fired = vi.fn();
    const timer = setLongInterval(fired, 30 * DAY_MS);
    vi.advanceTimersByTime(30 * DAY_MS);
    expect(fired).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(30 * DAY_MS - 1);
    expect(fired).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(2);
    clearLongTimer(timer);
    vi.advanceTimersByTime(90 * DAY_MS);
    expect(fired).toHaveBeenCalledTimes(2);
  });

  it("waits 10,000 years in steps, one timer at a time, and clears at any step", () => {
    vi.useFakeTimers();
    const fired = vi.fn();
    const timer = setLongTimeout(fired, 10_000 * 365 * DAY_MS) as ChainedTimer;
    vi.advanceTimersByTime(5 * MAX_TIMER_DELAY_MS);
    expect(fired).not.toHaveBeenCalled();
    expect(timer.steps).toBe(6);
    expect(vi.getTimerCount()).toBe(1);
    clearLongTimer(timer);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("never fires an infinite delay, and holds no timer for it", () => {
    vi.useFakeTimers();
    const fired = vi.fn();
    const timeout = setLongTimeout(fired, Number.POSITIVE_INFINITY) as ChainedTimer;
    const interval = setLongInterval(fired, Number.POSITIVE_INFINITY) as ChainedTimer;
    expect(vi.getTimerCount()).toBe(0);
    expect(timeout.steps + interval.steps).toBe(0);
    expect(timeout.hasRef()).toBe(false);
    clearLongTimer(timeout);
    clearLongTimer(interval);
  });

  it("keeps delays within the limit on Node's own timers, NaN and negative ones at 0", () => {
    vi.useFakeTimers();
    const fired = vi.fn();
    setLongTimeout(fired, MAX_TIMER_DELAY_MS);
    setLongTimeout(fired, -5);
    setLongTimeout(fired, Number.NaN);
    vi.advanceTimersByTime(0);
    expect(fired).toHaveBeenCalledTimes(2);
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS);
    expect(fired).toHaveBeenCalledTimes(3);
  });

  it("unref applies to the steps to come", () => {
    vi.useFakeTimers();
    const timer = setLongTimeout(() => {}, 3 * MAX_TIMER_DELAY_MS) as ChainedTimer;
    expect(timer.hasRef()).toBe(true);
    timer.unref();
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS);
    expect(timer.steps).toBe(2);
    expect(timer.hasRef()).toBe(false);
    timer.ref();
    expect(timer.hasRef()).toBe(true);
    clearLongTimer(timer);
  });

  it("on the real clock, a 30-day timeout and interval do not fire and raise no TimeoutOverflowWarning", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const fired = vi.fn();
      const timeout = setLongTimeout(fired, 30 * DAY_MS);
      const interval = setLongInterval(fired, 30 * DAY_MS);
      // Node fires an overflowed timer after 1 ms and emits the warning on the next tick: 50 ms is past both.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(fired).not.toHaveBeenCalled();
      clearLongTimer(timeout);
      clearLongTimer(interval);
      expect(warnings.filter((w) => w.name === "TimeoutOverflowWarning")).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
