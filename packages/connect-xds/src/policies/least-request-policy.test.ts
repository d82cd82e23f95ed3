import { describe, expect, it } from "vitest";
import { createHarness, endpoint, seededRandom } from "../../test/support/policy-harness.js";
import type { CompletePick } from "../balancer/lb-policy.js";
import { createLeastRequestPolicyFactory } from "./least-request-policy.js";

const addresses = ["127.0.0.1:9101", "127.0.0.1:9102", "127.0.0.1:9103"];

function setup(choiceCount = 2) {
  const h = createHarness(seededRandom(7));
  const f = createLeastRequestPolicyFactory();
  const p = f.create(h.helper);
  p.update({ config: f.parseConfig({ choiceCount }), endpoints: addresses.map((a) => endpoint(a)) });
  return { h, p, f };
}

describe("least_request policy (A48)", () => {
  it("connects every endpoint at once and queues until one is READY", () => {
    const { h } = setup();
    expect([...h.subchannels.values()].map((s) => s.connectRequests)).toEqual([1, 1, 1]);
    expect(h.state).toBe("CONNECTING");
    expect(h.pick()).toEqual({ type: "queue" });
  });

  it("avoids the endpoint with calls in flight; counts survive a new picker", () => {
    const { h } = setup(10);
    for (const a of addresses) h.sub(a).set("READY");
    const busy = h.pick() as CompletePick;
    for (let i = 0; i < 5; i++) busy.tracker?.onCallStarted?.();
    // A state change elsewhere publishes a new picker; the 5 calls still count.
    h.sub(addresses[2] as string).set("CONNECTING");
    h.sub(addresses[2] as string).set("READY");
    for (let i = 0; i < 50; i++) {
      const p = h.pick() as CompletePick;
      expect(p.subchannel.address).not.toBe(busy.subchannel.address);
    }
    for (let i = 0; i < 5; i++)
      busy.tracker?.onCallEnded?.({ code: 0, trailers: new Headers(), orcaReport: undefined });
    const seen = new Set(Array.from({ length: 60 }, () => (h.pick() as CompletePick).subchannel.address));
    expect(seen.has(busy.subchannel.address)).toBe(true);
  });

  it("reconnects an endpoint that goes IDLE and fails with the last error when none is usable", () => {
    const { h } = setup();
    const s = h.sub(addresses[0] as string);
    s.set("READY");
    s.set("IDLE");
    expect(s.connectRequests).toBe(2);
    for (const a of addresses) h.sub(a).set("TRANSIENT_FAILURE", new Error(`refused ${a}`));
    expect(h.state).toBe("TRANSIENT_FAILURE");
    const r = h.pick();
    expect(r.type === "fail" && r.error.message).toMatch(/no endpoint is READY; last error: refused/);
  });

  it("parses choiceCount: default 2, above 10 capped, below 2 refused", () => {
    const f = createLeastRequestPolicyFactory();
    expect(f.parseConfig({})).toEqual({ choiceCount: 2 });
    expect(f.parseConfig({ choiceCount: 50 })).toEqual({ choiceCount: 10 });
    expect(() => f.parseConfig({ choiceCount: 1 })).toThrow(/≥ 2/);
  });
});
