// round_robin, weighted_target (through xds_wrr_locality) and pick_first driven by hand.
import { describe, expect, it } from "vitest";
import { builtinLbPolicies, createLbPolicyRegistry, type LbEndpoint, type LbPolicy } from "../src/index.js";
import { createHarness, endpoint, type Harness } from "./support/fake-helper.js";

function start(json: object, endpoints: LbEndpoint[], random?: () => number): { h: Harness; policy: LbPolicy } {
  const h = createHarness(random);
  const { factory, config } = createLbPolicyRegistry(builtinLbPolicies).select([json]);
  const policy = factory.create(h.helper);
  policy.update({ config, endpoints });
  return { h, policy };
}

const A = "10.0.0.1:80";
const B = "10.0.0.2:80";
const C = "10.0.0.3:80";

describe("round_robin", () => {
  it("connects every endpoint and rotates over the READY ones", () => {
    const { h } = start({ round_robin: {} }, [endpoint(A), endpoint(B), endpoint(C)], () => 0);
    expect(h.subchannels.map((s) => s.connectRequests)).toEqual([1, 1, 1]);
    expect(h.state()).toBe("CONNECTING");
    h.subchannel(A).set("READY");
    h.subchannel(C).set("READY");
    expect(h.pick(4)).toEqual([A, C, A, C]);
    h.subchannel(B).set("READY");
    expect(h.pick(3)).toEqual([A, B, C]);
  });

  it("reconnects an endpoint that goes IDLE and keeps a failed one TRANSIENT_FAILURE until READY", () => {
    const { h } = start({ round_robin: {} }, [endpoint(A)]);
    h.subchannel(A).set("READY");
    h.subchannel(A).set("IDLE");
    expect(h.subchannel(A).connectRequests).toBe(2);
    h.subchannel(A).set("TRANSIENT_FAILURE", new Error("connection refused"));
    expect(h.state()).toBe("TRANSIENT_FAILURE");
    h.subchannel(A).set("IDLE");
    h.subchannel(A).set("CONNECTING");
    expect(h.state()).toBe("TRANSIENT_FAILURE");
    expect(h.pick()).toEqual(["fail"]);
    h.subchannel(A).set("READY");
    expect(h.pick()).toEqual([A]);
  });

  it("keeps the subchannels of endpoints that stay and closes those that go", () => {
    const { h, policy } = start({ round_robin: {} }, [endpoint(A), endpoint(B)]);
    const first = h.subchannel(A);
    policy.update({ config: {}, endpoints: [endpoint(A), endpoint(C)] });
    expect(h.subchannel(A)).toBe(first);
    expect(h.subchannels.find((s) => s.address === B)?.closed).toBe(true);
    expect(h.subchannels.map((s) => s.address)).toEqual([A, B, C]);
  });

  it("fails calls when it has no endpoints, saying why", () => {
    const { h, policy } = start({ round_robin: {} }, []);
    expect(h.state()).toBe("TRANSIENT_FAILURE");
    policy.update({ config: {}, endpoints: [], resolutionNote: "EDS has none" });
    const picker = h.published.at(-1)!.picker;
    const result = picker.pick({} as never);
    expect(result.type === "fail" && result.error.rawMessage).toBe("no endpoints (EDS has none)");
  });
});

describe("xds_wrr_locality + weighted_target", () => {
  const WRR = { xds_wrr_locality_experimental: { childPolicy: [{ round_robin: {} }] } };
  const localities = (weightA: number, weightB: number) => [
    { ...endpoint(A, "a", 0, weightA), path: [endpoint(A, "a", 0).path[1]!] },
    { ...endpoint(B, "b", 0, weightB), path: [endpoint(B, "b", 0).path[1]!] },
  ];

  it("splits picks among READY localities by locality weight", () => {
    let draw = 0;
    // Draws spread evenly over [0, 1): the split is then exactly the weights.
    const { h } = start(WRR, localities(1, 3), () => ((draw++ % 100) + 0.5) / 100);
    h.subchannel(A).set("READY");
    h.subchannel(B).set("READY");
    const picks = h.pick(400);
    expect(picks.filter((p) => p === A).length).toBe(100);
    expect(picks.filter((p) => p === B).length).toBe(300);
  });

  it("sends everything to the READY locality while the other connects", () => {
    const { h } = start(WRR, localities(1, 1));
    h.subchannel(B).set("CONNECTING");
    h.subchannel(A).set("READY");
    expect(new Set(h.pick(20))).toEqual(new Set([A]));
  });

  it("is TRANSIENT_FAILURE only when every locality is", () => {
    const { h } = start(WRR, localities(1, 1));
    h.subchannel(A).set("TRANSIENT_FAILURE", new Error("a down"));
    expect(h.state()).not.toBe("TRANSIENT_FAILURE");
    h.subchannel(B).set("TRANSIENT_FAILURE", new Error("b down"));
    expect(h.state()).toBe("TRANSIENT_FAILURE");
  });
});

describe("pick_first", () => {
  it("tries addresses in order, uses the first that connects and closes the rest", () => {
    const { h } = start({ pick_first: {} }, [endpoint(A), endpoint(B), endpoint(C)]);
    expect(h.subchannels.map((s) => s.connectRequests)).toEqual([1, 0, 0]);
    h.subchannel(A).set("TRANSIENT_FAILURE", new Error("refused"));
    expect(h.subchannel(B).connectRequests).toBe(1);
    h.subchannel(B).set("READY");
    expect(h.pick(3)).toEqual([B, B, B]);
    expect(h.subchannels.filter((s) => s.closed).map((s) => s.address)).toEqual([A, C]);
  });

  it("goes IDLE when its connection is lost and reconnects on the next pick", async () => {
    const { h } = start({ pick_first: {} }, [endpoint(A), endpoint(B)]);
    h.subchannel(A).set("READY");
    h.subchannel(A).set("IDLE");
    expect(h.state()).toBe("IDLE");
    expect(h.pick()).toEqual(["queue"]);
    await Promise.resolve();
    expect(h.subchannel(A).connectRequests).toBe(2);
    expect(h.state()).toBe("CONNECTING");
  });

  it("stays TRANSIENT_FAILURE after every address failed, retrying each as its backoff ends (A62)", () => {
    const { h } = start({ pick_first: {} }, [endpoint(A), endpoint(B)]);
    h.subchannel(A).set("TRANSIENT_FAILURE", new Error("a"));
    h.subchannel(B).set("TRANSIENT_FAILURE", new Error("b"));
    expect(h.state()).toBe("TRANSIENT_FAILURE");
    const published = h.published.length;
    h.subchannel(A).set("IDLE");
    expect(h.subchannel(A).connectRequests).toBe(2);
    h.subchannel(A).set("CONNECTING");
    expect(h.published.length).toBe(published);
    h.subchannel(A).set("READY");
    expect(h.pick()).toEqual([A]);
  });

  it("Happy Eyeballs (A61): starts the next address after 250 ms without dropping the first, or at once on failure", () => {
    const { h } = start({ pick_first: {} }, [endpoint(A), endpoint(B), endpoint(C)]);
    h.subchannel(A).set("CONNECTING");
    h.clock.advance(249);
    expect(h.subchannels.map((s) => s.connectRequests)).toEqual([1, 0, 0]);
    h.clock.advance(1);
    expect(h.subchannels.map((s) => s.connectRequests)).toEqual([1, 1, 0]);
    // B fails before its delay: C starts at once; A is still trying.
    h.subchannel(B).set("TRANSIENT_FAILURE", new Error("b"));
    expect(h.subchannels.map((s) => s.connectRequests)).toEqual([1, 1, 1]);
    expect(h.subchannel(A).closed).toBe(false);
    // The first attempt that connects wins, whichever it is.
    h.subchannel(A).set("READY");
    expect(h.pick(2)).toEqual([A, A]);
    expect(h.subchannels.filter((s) => s.closed).map((s) => s.address)).toEqual([B, C]);
  });

  it("ends the pass only when every address has failed, then asks for re-resolution", () => {
    const { h } = start({ pick_first: {} }, [endpoint(A), endpoint(B)]);
    h.clock.advance(250);
    h.subchannel(B).set("TRANSIENT_FAILURE", new Error("b"));
    expect(h.state()).toBe("CONNECTING");
    expect(h.reresolutions).toBe(0);
    h.subchannel(A).set("TRANSIENT_FAILURE", new Error("a"));
    expect(h.state()).toBe("TRANSIENT_FAILURE");
    expect(h.reresolutions).toBe(1);
  });

  it("interleaves the two address families, starting with the first address's (A61, RFC 8305)", () => {
    const [v6a, v6b, v6c, v4a] = ["[2001:db8::1]:80", "[2001:db8::2]:80", "[2001:db8::3]:80", "10.0.0.9:80"];
    const both: LbEndpoint = { ...endpoint(v6a), addresses: [v6a, v6b, v6c, v4a] };
    const { h } = start({ pick_first: {} }, [both, endpoint(A)]);
    expect(h.subchannels.map((s) => s.address)).toEqual([v6a, v4a, v6b, A, v6c]);
  });

  it("shuffles the endpoints when asked", () => {
    const { h } = start({ pick_first: { shuffleAddressList: true } }, [endpoint(A), endpoint(B), endpoint(C)], () => 0);
    // With draws of 0, Fisher-Yates moves each last element to the front in turn: [B, C, A].
    expect(h.subchannels.map((s) => s.address)).toEqual([B, C, A]);
    expect(h.subchannel(B).connectRequests).toBe(1);
  });
});

describe("endpoints with several addresses (A61)", () => {
  const dual = (first: string, second: string): LbEndpoint => ({ ...endpoint(first), addresses: [first, second] });

  it("round_robin keeps one subchannel per endpoint, connected to whichever address pick_first chose", async () => {
    const { h } = start({ round_robin: {} }, [dual(A, B), endpoint(C)], () => 0);
    // The endpoint's pick_first starts when round_robin connects it, after C's subchannel was made.
    expect(h.subchannels.map((s) => s.address)).toEqual([C, A, B]);
    expect(h.subchannel(A).connectRequests).toBe(1);
    h.subchannel(A).set("TRANSIENT_FAILURE", new Error("refused"));
    expect(h.subchannel(B).connectRequests).toBe(1);
    h.subchannel(B).set("READY");
    h.subchannel(C).set("READY");
    await Promise.resolve();
    // Two endpoints, so each gets half the picks; the first endpoint's pick sends calls on B's connection.
    const picker = h.published.at(-1)?.picker;
    const picks = [0, 1, 2, 3].map(() => picker?.pick({} as never));
    const sent = picks.map((p) => (p?.type === "complete" ? (p.subchannel.delegate ?? p.subchannel).address : "?"));
    expect(sent.sort()).toEqual([B, B, C, C]);
    expect(h.subchannels.find((s) => s.address === A)?.closed).toBe(true);
  });

  it("an endpoint whose addresses changed is a new endpoint (new subchannels)", () => {
    const { h, policy } = start({ round_robin: {} }, [dual(A, B)]);
    const first = h.subchannels.length;
    policy.update({ config: {}, endpoints: [dual(A, C)] });
    expect(h.subchannels.slice(first).map((s) => s.address)).toEqual([A, C]);
    expect(h.subchannels.slice(0, first).every((s) => s.closed)).toBe(true);
  });
});
