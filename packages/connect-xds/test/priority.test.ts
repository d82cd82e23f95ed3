// The priority policy's state machine on a virtual clock (gRPC's failover rules, A27): children start lazily, a
// lower priority starts only when the higher one fails or has not connected within 10 s, traffic returns to a
// higher priority once it is READY, and a deactivated child is kept 15 minutes.
import { describe, expect, it } from "vitest";
import { builtinLbPolicies, createLbPolicyRegistry, type LbEndpoint, type LbPolicy } from "../src/index.js";
import { createHarness, endpoint, type Harness } from "./support/fake-helper.js";

const CHILD = [{ xds_wrr_locality_experimental: { childPolicy: [{ round_robin: {} }] } }];

function start(endpoints: LbEndpoint[], priorities = ["priority-0", "priority-1"]): { h: Harness; policy: LbPolicy } {
  const h = createHarness();
  const { factory, config } = createLbPolicyRegistry(builtinLbPolicies).select([
    {
      priority_experimental: {
        priorities,
        children: Object.fromEntries(priorities.map((name) => [name, { config: CHILD }])),
      },
    },
  ]);
  const policy = factory.create(h.helper);
  policy.update({ config, endpoints });
  return { h, policy };
}

const P0 = "10.0.0.1:80";
const P1 = "10.0.1.1:80";
const both = [endpoint(P0, "a", 0), endpoint(P1, "b", 1)];

describe("priority", () => {
  it("starts only the highest priority and waits for it while it connects", () => {
    const { h } = start(both);
    expect(h.subchannels.map((s) => s.address)).toEqual([P0]);
    expect(h.subchannel(P0).connectRequests).toBe(1);
    h.subchannel(P0).set("CONNECTING");
    expect(h.state()).toBe("CONNECTING");
    expect(h.pick()).toEqual(["queue"]);
  });

  it("starts the next priority when the failover timer (10 s) ends before the first connects", () => {
    const { h } = start(both);
    h.subchannel(P0).set("CONNECTING");
    h.clock.advance(9_999);
    expect(h.subchannels.map((s) => s.address)).toEqual([P0]);
    h.clock.advance(1);
    expect(h.subchannels.map((s) => s.address)).toEqual([P0, P1]);
    h.subchannel(P1).set("CONNECTING");
    h.subchannel(P1).set("READY");
    expect(h.state()).toBe("READY");
    expect(h.pick(3)).toEqual([P1, P1, P1]);
  });

  it("fails over at once when the first priority reports TRANSIENT_FAILURE", () => {
    const { h } = start(both);
    h.subchannel(P0).set("CONNECTING");
    h.subchannel(P0).set("TRANSIENT_FAILURE", new Error("refused"));
    expect(h.subchannels.map((s) => s.address)).toEqual([P0, P1]);
    h.subchannel(P1).set("READY");
    expect(h.pick(2)).toEqual([P1, P1]);
  });

  it("returns traffic to the higher priority when it is READY again, and keeps the lower one 15 minutes", () => {
    const { h } = start(both);
    h.subchannel(P0).set("TRANSIENT_FAILURE", new Error("refused"));
    h.subchannel(P1).set("READY");
    expect(h.pick()).toEqual([P1]);
    // The failed subchannel retries after its backoff (IDLE, reconnect) and connects.
    h.subchannel(P0).set("IDLE");
    h.subchannel(P0).set("CONNECTING");
    expect(h.pick()).toEqual([P1]);
    h.subchannel(P0).set("READY");
    expect(h.pick(2)).toEqual([P0, P0]);
    // P0 fails again: P1, still connected, takes over at once.
    h.subchannel(P0).set("TRANSIENT_FAILURE", new Error("reset"));
    expect(h.pick()).toEqual([P1]);
    h.subchannel(P0).set("IDLE");
    h.subchannel(P0).set("READY");
    expect(h.pick()).toEqual([P0]);
    h.clock.advance(15 * 60_000 - 1);
    expect(h.subchannel(P1).closed).toBe(false);
    h.clock.advance(1);
    expect(h.subchannels.find((s) => s.address === P1)?.closed).toBe(true);
  });

  it("uses the lowest priority's picker when every priority failed", () => {
    const { h } = start(both);
    h.subchannel(P0).set("TRANSIENT_FAILURE", new Error("p0 down"));
    h.subchannel(P1).set("TRANSIENT_FAILURE", new Error("p1 down"));
    expect(h.state()).toBe("TRANSIENT_FAILURE");
    expect(h.pick()).toEqual(["fail"]);
  });

  it("does not give a child that reported TRANSIENT_FAILURE a new failover timer until it is READY", () => {
    const { h, policy } = start(both);
    h.subchannel(P0).set("TRANSIENT_FAILURE", new Error("down"));
    h.subchannel(P1).set("READY");
    expect(h.pick()).toEqual([P1]);
    // A new endpoint in priority 0 makes that child CONNECTING again; having failed, it is not chosen while it
    // connects (no new 10 s grace), so calls keep going to priority 1.
    const P0B = "10.0.0.2:80";
    const config = createLbPolicyRegistry(builtinLbPolicies).select([
      {
        priority_experimental: {
          priorities: ["priority-0", "priority-1"],
          children: { "priority-0": { config: CHILD }, "priority-1": { config: CHILD } },
        },
      },
    ]).config;
    policy.update({ config, endpoints: [...both, endpoint(P0B, "a", 0)] });
    h.subchannel(P0B).set("CONNECTING");
    expect(h.pick(2)).toEqual([P1, P1]);
    h.subchannel(P0B).set("READY");
    expect(h.pick()).toEqual([P0B]);
  });
});
