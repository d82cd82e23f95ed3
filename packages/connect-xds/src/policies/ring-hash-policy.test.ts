import type { HashPolicy } from "@xdskit/xds-client";
import { describe, expect, it } from "vitest";
import { createHarness, endpoint, flushMicrotasks } from "../../test/support/policy-harness.js";
import type { CompletePick } from "../balancer/lb-policy.js";
import { createRingHashPolicyFactory } from "./ring-hash-policy.js";
import { xxHash64 } from "./xx-hash64.js";

const BY_USER: readonly HashPolicy[] = [{ type: "header", headerName: "x-user", terminal: false }];
const addresses = ["127.0.0.1:9001", "127.0.0.1:9002", "127.0.0.1:9003", "127.0.0.1:9004"];

function setup(cap?: number) {
  const h = createHarness();
  const factory = createRingHashPolicyFactory(cap === undefined ? {} : { ringSizeCap: cap });
  const policy = factory.create(h.helper);
  policy.update({
    config: factory.parseConfig({ minRingSize: 64, maxRingSize: 256 }),
    endpoints: addresses.map((a) => endpoint(a)),
  });
  return { h, policy, factory };
}

const pickedAddress = (r: ReturnType<ReturnType<typeof createHarness>["pick"]>) =>
  r.type === "complete" ? (r as CompletePick).subchannel.address : r.type;

describe("ring_hash policy (A42/A61)", () => {
  it("parses its config with gRPC's caps and refuses bad sizes", () => {
    const f = createRingHashPolicyFactory();
    expect(f.parseConfig({})).toEqual({ minRingSize: 1024, maxRingSize: 4096 });
    expect(f.parseConfig({ minRingSize: 10, maxRingSize: 8_388_608 })).toEqual({ minRingSize: 10, maxRingSize: 4096 });
    expect(() => f.parseConfig({ minRingSize: 10, maxRingSize: 5 })).toThrow(/greater than/);
    expect(() => f.parseConfig({ minRingSize: "1" })).toThrow(/must be a number/);
    expect(f.typeNames).toEqual(["envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash"]);
  });

  it("starts IDLE without connecting; a pick connects only the endpoint its hash lands on and queues", async () => {
    const { h } = setup();
    expect(h.state).toBe("IDLE");
    expect([...h.subchannels.values()].every((s) => s.connectRequests === 0)).toBe(true);
    expect(h.pick({ "x-user": "alice" }, BY_USER)).toEqual({ type: "queue" });
    await flushMicrotasks();
    const asked = [...h.subchannels.values()].filter((s) => s.connectRequests > 0);
    expect(asked).toHaveLength(1);
    asked[0]?.set("CONNECTING");
    expect(h.pick({ "x-user": "alice" }, BY_USER)).toEqual({ type: "queue" });
    asked[0]?.set("READY");
    expect(h.state).toBe("READY");
    expect(pickedAddress(h.pick({ "x-user": "alice" }, BY_USER))).toBe(asked[0]?.address);
  });

  it("sends the same header value to the same endpoint every time, and different values across endpoints", () => {
    const { h } = setup();
    for (const a of addresses) h.sub(a).set("READY");
    const owners = new Map<string, string>();
    for (let i = 0; i < 200; i++) {
      const user = `user-${i % 40}`;
      const got = pickedAddress(h.pick({ "x-user": user }, BY_USER));
      if (owners.has(user)) expect(got).toBe(owners.get(user));
      owners.set(user, got);
    }
    expect(new Set(owners.values()).size).toBe(4);
  });

  it("skips endpoints in TRANSIENT_FAILURE (kept sticky through CONNECTING) and fails when all are failed", () => {
    const { h } = setup();
    for (const a of addresses) h.sub(a).set("READY");
    const first = pickedAddress(h.pick({ "x-user": "bob" }, BY_USER));
    h.sub(first).set("CONNECTING");
    h.sub(first).set("TRANSIENT_FAILURE", new Error("connection refused"));
    h.sub(first).set("CONNECTING");
    const second = pickedAddress(h.pick({ "x-user": "bob" }, BY_USER));
    expect(second).not.toBe(first);
    expect(addresses).toContain(second);
    for (const a of addresses) {
      h.sub(a).set("CONNECTING");
      h.sub(a).set("TRANSIENT_FAILURE", new Error(`refused ${a}`));
    }
    expect(h.state).toBe("TRANSIENT_FAILURE");
    const failed = h.pick({ "x-user": "bob" }, BY_USER);
    expect(failed.type).toBe("fail");
    expect(failed.type === "fail" && failed.error.message).toMatch(
      /every endpoint is in TRANSIENT_FAILURE; last error: refused/,
    );
  });

  it("reports CONNECTING with one failed endpoint and TRANSIENT_FAILURE with two, connecting an IDLE one on its own", async () => {
    const { h } = setup();
    h.sub(addresses[0] as string).set("TRANSIENT_FAILURE");
    expect(h.state).toBe("CONNECTING");
    await flushMicrotasks();
    expect(h.sub(addresses[1] as string).connectRequests).toBe(1);
    h.sub(addresses[1] as string).set("TRANSIENT_FAILURE");
    expect(h.state).toBe("TRANSIENT_FAILURE");
    await flushMicrotasks();
    expect(h.sub(addresses[2] as string).connectRequests).toBe(1);
  });

  it("treats a READY endpoint whose connection drops as IDLE: the next pick reconnects it", async () => {
    const { h } = setup();
    for (const a of addresses) h.sub(a).set("READY");
    const owner = pickedAddress(h.pick({ "x-user": "carol" }, BY_USER));
    h.sub(owner).set("TRANSIENT_FAILURE");
    expect(h.pick({ "x-user": "carol" }, BY_USER)).toEqual({ type: "queue" });
    await flushMicrotasks();
    expect(h.sub(owner).connectRequests).toBe(1);
  });

  it("hashes on the channel id when asked, so every call of the policy lands on one endpoint", () => {
    const { h } = setup();
    for (const a of addresses) h.sub(a).set("READY");
    const channel: readonly HashPolicy[] = [{ type: "channel_id", terminal: false }];
    const picks = new Set(Array.from({ length: 50 }, (_, i) => pickedAddress(h.pick({ "x-user": `u${i}` }, channel))));
    expect(picks.size).toBe(1);
  });

  it("without a hash policy spreads calls at random over the ring", () => {
    const { h } = setup();
    for (const a of addresses) h.sub(a).set("READY");
    const seen = new Set(Array.from({ length: 100 }, () => pickedAddress(h.pick({}))));
    expect(seen.size).toBe(4);
  });

  it("rebuilds the ring when endpoints change and closes the subchannels of removed ones", () => {
    // With one ring entry per endpoint (minimum ring size 1, equal weights) the ring changes only by the removed
    // endpoint's entry, so exactly its keys move. Larger rings also gain entries per endpoint as the count drops.
    const h = createHarness();
    const factory = createRingHashPolicyFactory();
    const policy = factory.create(h.helper);
    policy.update({
      config: factory.parseConfig({ minRingSize: 1, maxRingSize: 256 }),
      endpoints: addresses.map((a) => endpoint(a)),
    });
    for (const a of addresses) h.sub(a).set("READY");
    const before = new Map(
      Array.from({ length: 60 }, (_, i) => [`k${i}`, pickedAddress(h.pick({ "x-user": `k${i}` }, BY_USER))] as const),
    );
    policy.update({
      config: factory.parseConfig({ minRingSize: 1, maxRingSize: 256 }),
      endpoints: addresses.slice(1).map((a) => endpoint(a)),
    });
    expect(h.sub(addresses[0] as string).closed).toBe(true);
    let movedFromRemoved = 0;
    for (const [key, owner] of before) {
      const now = pickedAddress(h.pick({ "x-user": key }, BY_USER));
      if (owner === addresses[0]) movedFromRemoved++;
      else expect(now).toBe(owner);
      expect(now).not.toBe(addresses[0]);
    }
    expect(movedFromRemoved).toBeGreaterThan(0);
  });

  it("fails calls with UNAVAILABLE and the resolution note when there are no endpoints", () => {
    const h = createHarness();
    const f = createRingHashPolicyFactory();
    f.create(h.helper).update({
      config: f.parseConfig({}),
      endpoints: [],
      resolutionNote: "EDS resource e1 does not exist",
    });
    expect(h.state).toBe("TRANSIENT_FAILURE");
    const r = h.pick();
    expect(r.type === "fail" && r.error.message).toMatch(/no endpoints: EDS resource e1 does not exist/);
  });

  it("weights endpoints by endpoint × locality weight (A42) and merges duplicate addresses", () => {
    const h = createHarness();
    const f = createRingHashPolicyFactory();
    const p = f.create(h.helper);
    p.update({
      config: f.parseConfig({ minRingSize: 1000, maxRingSize: 4096 }),
      endpoints: [endpoint("10.0.0.1:80", 1, 3), endpoint("10.0.0.2:80", 1, 1), endpoint("10.0.0.2:80", 2, 1)],
    });
    for (const s of h.subchannels.values()) s.set("READY");
    let first = 0;
    for (let i = 0; i < 2000; i++) if (pickedAddress(h.pick({ "x-user": `${i}` }, BY_USER)) === "10.0.0.1:80") first++;
    // Both weigh 3: about half each.
    expect(first).toBeGreaterThan(800);
    expect(first).toBeLessThan(1200);
    expect(xxHash64("10.0.0.1:80_0")).toBeTypeOf("bigint");
  });
});

describe("ring_hash requestHashHeader (A76)", () => {
  it("parses and checks the header name", () => {
    const f = createRingHashPolicyFactory();
    expect(f.parseConfig({ requestHashHeader: "x-session" })).toEqual({
      minRingSize: 1024,
      maxRingSize: 4096,
      requestHashHeader: "x-session",
    });
    expect(f.parseConfig({ requestHashHeader: "" })).toEqual({ minRingSize: 1024, maxRingSize: 4096 });
    expect(() => f.parseConfig({ requestHashHeader: "X-Session" })).toThrow(
      'ring_hash requestHashHeader "X-Session" is not a valid header name',
    );
    expect(() => f.parseConfig({ requestHashHeader: "x-key-bin" })).toThrow(
      'ring_hash requestHashHeader "x-key-bin" is a binary header',
    );
    expect(() => f.parseConfig({ requestHashHeader: 7 })).toThrow("ring_hash requestHashHeader must be a string");
    expect(createRingHashPolicyFactory({ typedStruct: true }).typeNames).toEqual([
      "envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash",
      "ring_hash_experimental",
    ]);
  });

  it("hashes the header's value instead of the route's hash policies; without it, a random hash", () => {
    const h = createHarness();
    const factory = createRingHashPolicyFactory();
    const policy = factory.create(h.helper);
    policy.update({
      config: factory.parseConfig({ minRingSize: 64, maxRingSize: 256, requestHashHeader: "x-session" }),
      endpoints: addresses.map((a) => endpoint(a)),
    });
    for (const a of addresses) h.sub(a).set("READY");
    // The route hashes x-user; the policy's header wins: same x-session, same endpoint, whatever x-user says.
    const owners = new Map<string, Set<string>>();
    for (let i = 0; i < 200; i++) {
      const session = `s-${i % 20}`;
      const got = pickedAddress(h.pick({ "x-session": session, "x-user": `u-${i}` }, BY_USER));
      owners.set(session, (owners.get(session) ?? new Set()).add(got));
    }
    expect([...owners.values()].every((set) => set.size === 1)).toBe(true);
    expect(new Set([...owners.values()].map((set) => [...set][0])).size).toBeGreaterThan(1);
    // Without the header (or with it empty), the same x-user lands on different endpoints: a random hash.
    const spread = new Set<string>();
    for (let i = 0; i < 40; i++) spread.add(pickedAddress(h.pick({ "x-user": "same", "x-session": "" }, BY_USER)));
    expect(spread.size).toBeGreaterThan(1);
  });
});

describe("ring_hash endpoint hash keys (A76)", () => {
  it("places endpoints by their hash keys: keys moved to other addresses take their calls along", () => {
    const h = createHarness();
    const factory = createRingHashPolicyFactory();
    const policy = factory.create(h.helper);
    const config = factory.parseConfig({ minRingSize: 64, maxRingSize: 256 });
    const keyed = (keys: readonly string[]) =>
      addresses.map((a, i) => ({ ...endpoint(a), hashKey: keys[i] as string }));
    const keys = ["pod-0", "pod-1", "pod-2", "pod-3"];
    policy.update({ config, endpoints: keyed(keys) });
    for (const a of addresses) h.sub(a).set("READY");
    const keyOf = new Map(addresses.map((a, i) => [a, keys[i] as string]));
    const before = new Map(
      Array.from({ length: 80 }, (_, i) => {
        const owner = pickedAddress(h.pick({ "x-user": `u${i}` }, BY_USER));
        return [`u${i}`, keyOf.get(owner) as string] as const;
      }),
    );
    expect(new Set(before.values()).size).toBe(4);
    // The pods restart at each other's addresses: every call follows its pod's key, not the address it had.
    const moved = ["pod-2", "pod-3", "pod-0", "pod-1"];
    policy.update({ config, endpoints: keyed(moved) });
    const addressOf = new Map(moved.map((k, i) => [k, addresses[i] as string]));
    for (const [user, key] of before) {
      expect(pickedAddress(h.pick({ "x-user": user }, BY_USER))).toBe(addressOf.get(key));
    }
    // Same addresses: the connections stay.
    expect(addresses.every((a) => !h.sub(a).closed)).toBe(true);
    // An empty key is no key: the endpoint is placed by its address again.
    policy.update({ config, endpoints: addresses.map((a) => ({ ...endpoint(a), hashKey: "" })) });
    const byAddress = createHarness();
    const plain = factory.create(byAddress.helper);
    plain.update({ config, endpoints: addresses.map((a) => endpoint(a)) });
    for (const a of addresses) byAddress.sub(a).set("READY");
    for (const user of before.keys()) {
      expect(pickedAddress(h.pick({ "x-user": user }, BY_USER))).toBe(
        pickedAddress(byAddress.pick({ "x-user": user }, BY_USER)),
      );
    }
  });
});
