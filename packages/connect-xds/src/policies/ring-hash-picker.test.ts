import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type EndpointConnectivity,
  nextRingHashEndpointState,
  RING_PICK_CONNECT,
  RING_PICK_FAIL,
  RING_PICK_QUEUE,
  RING_PICK_READY,
  ringHashAggregateState,
  ringHashPick,
  ringHashProactiveConnect,
  ringPickAction,
  ringPickEndpoint,
} from "./ring-hash-picker.js";
import { buildHashRing } from "./ring-hash-ring.js";

const S = ["IDLE", "CONNECTING", "READY", "TRANSIENT_FAILURE"] as const;
const state = fc.constantFrom<EndpointConnectivity>(...S);

describe("ring_hash endpoint states", () => {
  it("keeps TRANSIENT_FAILURE through reconnect attempts until READY, and treats a dropped READY as IDLE", () => {
    expect(nextRingHashEndpointState("TRANSIENT_FAILURE", "CONNECTING")).toBe("TRANSIENT_FAILURE");
    expect(nextRingHashEndpointState("TRANSIENT_FAILURE", "IDLE")).toBe("TRANSIENT_FAILURE");
    expect(nextRingHashEndpointState("TRANSIENT_FAILURE", "READY")).toBe("READY");
    expect(nextRingHashEndpointState("READY", "TRANSIENT_FAILURE")).toBe("IDLE");
    expect(nextRingHashEndpointState("CONNECTING", "TRANSIENT_FAILURE")).toBe("TRANSIENT_FAILURE");
    expect(nextRingHashEndpointState(undefined, "IDLE")).toBe("IDLE");
  });

  it("aggregates by A42's rules in order", () => {
    expect(ringHashAggregateState(["TRANSIENT_FAILURE", "TRANSIENT_FAILURE", "READY"])).toBe("READY");
    expect(ringHashAggregateState(["TRANSIENT_FAILURE", "TRANSIENT_FAILURE", "CONNECTING"])).toBe("TRANSIENT_FAILURE");
    expect(ringHashAggregateState(["TRANSIENT_FAILURE", "CONNECTING", "IDLE"])).toBe("CONNECTING");
    expect(ringHashAggregateState(["TRANSIENT_FAILURE", "IDLE", "IDLE"])).toBe("CONNECTING");
    expect(ringHashAggregateState(["TRANSIENT_FAILURE"])).toBe("TRANSIENT_FAILURE");
    expect(ringHashAggregateState(["IDLE", "IDLE"])).toBe("IDLE");
    expect(ringHashAggregateState([])).toBe("TRANSIENT_FAILURE");
  });

  it("connects the first IDLE endpoint on its own only while CONNECTING/TRANSIENT_FAILURE with nothing connecting (A61)", () => {
    expect(ringHashProactiveConnect(["TRANSIENT_FAILURE", "IDLE", "IDLE"])).toBe(1);
    expect(ringHashProactiveConnect(["TRANSIENT_FAILURE", "TRANSIENT_FAILURE", "IDLE"])).toBe(2);
    expect(ringHashProactiveConnect(["TRANSIENT_FAILURE", "CONNECTING", "IDLE"])).toBe(-1);
    expect(ringHashProactiveConnect(["IDLE", "IDLE"])).toBe(-1);
    expect(ringHashProactiveConnect(["READY", "IDLE", "TRANSIENT_FAILURE", "TRANSIENT_FAILURE"])).toBe(-1);
  });
});

describe("ringHashPick", () => {
  const ring = buildHashRing(
    Array.from({ length: 6 }, (_, i) => ({ key: `127.0.0.1:${9000 + i}`, weight: 1 + (i % 3) })),
    { minRingSize: 64, maxRingSize: 256 },
  );

  /** Slow path: A61's pseudo-code with a linear search for the first entry. */
  function reference(h: bigint, states: readonly EndpointConnectivity[]): [number, number] {
    let first = 0;
    while (first < ring.size && ring.hashAt(first) < h) first++;
    if (first === ring.size) first = 0;
    for (let i = 0; i < ring.size; i++) {
      const e = ring.endpointAt((first + i) % ring.size);
      if (states[e] === "READY") return [RING_PICK_READY, e];
      if (states[e] === "IDLE") return [RING_PICK_CONNECT, e];
      if (states[e] === "CONNECTING") return [RING_PICK_QUEUE, e];
    }
    return [RING_PICK_FAIL, ring.endpointAt(first)];
  }

  it("picks a READY endpoint, connects an IDLE one, queues on CONNECTING, skips failed ones, fails when all failed", () => {
    const h = ring.hashAt(10);
    const [hi, lo] = [Number(h >> 32n), Number(h & 0xffffffffn)];
    const owner = ring.endpointAt(10);
    const states = new Array<EndpointConnectivity>(6).fill("READY");
    expect(ringHashPick(ring, hi, lo, states)).toBe(owner * 4 + RING_PICK_READY);
    states[owner] = "IDLE";
    expect(ringHashPick(ring, hi, lo, states)).toBe(owner * 4 + RING_PICK_CONNECT);
    states[owner] = "CONNECTING";
    expect(ringPickAction(ringHashPick(ring, hi, lo, states))).toBe(RING_PICK_QUEUE);
    states[owner] = "TRANSIENT_FAILURE";
    const next = ringHashPick(ring, hi, lo, states);
    expect(ringPickAction(next)).toBe(RING_PICK_READY);
    expect(ringPickEndpoint(next)).not.toBe(owner);
    states.fill("TRANSIENT_FAILURE");
    expect(ringHashPick(ring, hi, lo, states)).toBe(owner * 4 + RING_PICK_FAIL);
  });

  it("property: agrees with A61's pseudo-code for any hash and endpoint states", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
        fc.array(state, { minLength: 6, maxLength: 6 }),
        (h, states) => {
          const packed = ringHashPick(ring, Number(h >> 32n), Number(h & 0xffffffffn), states);
          const [action, endpoint] = reference(h, states);
          return ringPickAction(packed) === action && ringPickEndpoint(packed) === endpoint;
        },
      ),
    );
  });

  it("returns -1 on an empty ring", () => {
    expect(ringHashPick(buildHashRing([], { minRingSize: 1, maxRingSize: 1 }), 0, 0, [])).toBe(-1);
  });
});
