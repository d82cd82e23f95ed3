import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { acquireRequestCounter, pickDropCategory } from "./circuit-breaker.js";
import { effectiveTimeoutMs } from "./timeouts.js";

describe("circuit breaker (A32)", () => {
  it("admits max_requests calls, refuses the next, and admits again when one ends", () => {
    const { counter, unref } = acquireRequestCounter("cb-test-1");
    for (let i = 0; i < 3; i++) expect(counter.tryAcquire(3)).toBe(true);
    expect(counter.tryAcquire(3)).toBe(false);
    counter.release();
    expect(counter.tryAcquire(3)).toBe(true);
    // A lower limit from a CDS update applies at once to what is in flight.
    expect(counter.tryAcquire(2)).toBe(false);
    for (let i = 0; i < 3; i++) counter.release();
    unref();
  });

  it("shares one counter per cluster and EDS service name across users, and forgets it when unused", () => {
    const a = acquireRequestCounter("cb-test-2", "eds");
    const b = acquireRequestCounter("cb-test-2", "eds");
    const other = acquireRequestCounter("cb-test-2", "other");
    expect(a.counter).toBe(b.counter);
    expect(other.counter).not.toBe(a.counter);
    a.counter.tryAcquire(10);
    expect(b.counter.inFlight).toBe(1);
    a.counter.release();
    a.unref();
    b.unref();
    b.unref();
    const c = acquireRequestCounter("cb-test-2", "eds");
    expect(c.counter).not.toBe(a.counter);
    c.unref();
    other.unref();
  });
});

describe("drop_overloads", () => {
  it("drops under the first category whose own draw is below its rate", () => {
    const drops = [
      { category: "lb", dropsPerMillion: 500_000 },
      { category: "throttle", dropsPerMillion: 1_000_000 },
    ];
    const draws = [0.6, 0.1];
    let i = 0;
    expect(pickDropCategory(drops, () => draws[i++] as number)).toBe("throttle");
    expect(pickDropCategory(drops, () => 0.4)).toBe("lb");
    expect(pickDropCategory([{ category: "x", dropsPerMillion: 0 }], () => 0)).toBeUndefined();
    expect(pickDropCategory([], () => 0)).toBeUndefined();
  });

  it("property: a single category drops exactly the draws below its rate", () => {
    fc.assert(
      fc.property(fc.nat(1_000_000), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (ppm, draw) => {
        const dropped = pickDropCategory([{ category: "c", dropsPerMillion: ppm }], () => draw) === "c";
        return dropped === Math.floor(draw * 1_000_000) < ppm;
      }),
    );
  });
});

describe("effectiveTimeoutMs (A31)", () => {
  it("takes the earlier of the application's timeout and max_stream_duration; 0 or unset means no xDS limit", () => {
    expect(effectiveTimeoutMs(undefined, undefined)).toBeUndefined();
    expect(effectiveTimeoutMs(5000, undefined)).toBe(5000);
    expect(effectiveTimeoutMs(undefined, 300)).toBe(300);
    expect(effectiveTimeoutMs(5000, 300)).toBe(300);
    expect(effectiveTimeoutMs(200, 300)).toBe(200);
    expect(effectiveTimeoutMs(200, 0)).toBe(200);
    expect(effectiveTimeoutMs(undefined, 0)).toBeUndefined();
  });
});
