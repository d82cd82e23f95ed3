import { describe, expect, it } from "vitest";
import { acquireRequestCounter } from "./circuit-breaker.js";

describe("circuit breaker counters (A32)", () => {
  it("count calls between start and end, never below zero", () => {
    const { counter, unref } = acquireRequestCounter("cb-test-1");
    counter.start();
    counter.start();
    expect(counter.inFlight).toBe(2);
    counter.end();
    counter.end();
    counter.end();
    expect(counter.inFlight).toBe(0);
    unref();
  });

  it("are shared per cluster and EDS service name across users, and forgotten when unused", () => {
    const a = acquireRequestCounter("cb-test-2", "eds");
    const b = acquireRequestCounter("cb-test-2", "eds");
    const other = acquireRequestCounter("cb-test-2", "other");
    expect(a.counter).toBe(b.counter);
    expect(other.counter).not.toBe(a.counter);
    a.counter.start();
    expect(b.counter.inFlight).toBe(1);
    a.counter.end();
    a.unref();
    b.unref();
    b.unref();
    const c = acquireRequestCounter("cb-test-2", "eds");
    expect(c.counter).not.toBe(a.counter);
    c.unref();
    other.unref();
  });

  it("keep a counter with calls in flight after its last user is gone", () => {
    const a = acquireRequestCounter("cb-test-3");
    a.counter.start();
    a.unref();
    const b = acquireRequestCounter("cb-test-3");
    expect(b.counter).toBe(a.counter);
    b.counter.end();
    b.unref();
  });
});
