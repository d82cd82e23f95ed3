// A47 federation: xdstp names, authorities with and without their own servers, in both protocols.
import { describe, expect, it } from "vitest";
import type { Protocol } from "./support/fake-transport.js";
import { csdsRows, NODE_ID, setup } from "./support/harness.js";
import { flush, recordingWatcher, summarize } from "./support/recorder.js";
import { listenerAny, type TestListener, testListenerType, wrappedAny } from "./support/test-types.js";

const LDS = testListenerType.typeUrl;
const LISTENER = "envoy.config.listener.v3.Listener";

describe.each(["sotw", "delta"] as const)("%s ADS: federation (A47)", (protocol: Protocol) => {
  function start() {
    return setup({
      protocol,
      bootstrap: {
        authorities: {
          "own.example": { xds_servers: [{ server_uri: "own:443", channel_creds: [{ type: "insecure" }] }] },
          "shared.example": {},
        },
      },
    });
  }

  it("gives an authority with its own server a separate stream with its own version and nonce", async () => {
    const { client, server, metrics } = start();
    const old = recordingWatcher<TestListener>();
    const own = recordingWatcher<TestListener>();
    client.watch(testListenerType, "plain", old);
    client.watch(testListenerType, `xdstp://own.example/${LISTENER}/l1`, own);
    const a = await server.nextStream();
    const b = await server.nextStream();
    const streams = new Map([a, b].map((s) => [s.server, s]));
    const top = streams.get("primary:443")!;
    const mine = streams.get("own:443")!;
    expect((await top.nextRequest()).names).toEqual(["plain"]);
    expect((await mine.nextRequest()).names).toEqual([`xdstp://own.example/${LISTENER}/l1`]);
    const ack = await mine.exchange({
      typeUrl: LDS,
      versionInfo: "42",
      nonce: "x",
      resources: [listenerAny(`xdstp://own.example/${LISTENER}/l1`)],
    });
    expect([ack.version, ack.nonce]).toEqual([protocol === "sotw" ? "42" : "", "x"]);
    await flush();
    expect(summarize(own.take())).toEqual([`resource:42:xdstp://own.example/${LISTENER}/l1`]);
    expect(old.take()).toEqual([]);
    // A78: the resources gauge is labelled by authority (#old for old-style names), `connected` by server.
    expect(metrics.gauges()).toEqual(
      new Map([
        ["connected{primary:443}", 0],
        ["connected{own:443}", 1],
        ["resources{#old,requested}", 1],
        ["resources{own.example,acked}", 1],
      ]),
    );
  });

  it("answers both streams, each ACK and later request carrying its own stream's version and nonce (scenario 43)", async () => {
    // Steps: plain (top-level server) and l1 (own.example's server) watched; each stream answered with its own
    // version and nonce, interleaved; each ACK names its own; a NACK on the own stream keeps its last good version
    // while the top stream's next request (a new name) carries the top stream's.
    const { client, server } = start();
    const l1 = `xdstp://own.example/${LISTENER}/l1`;
    const plain = recordingWatcher<TestListener>();
    const own = recordingWatcher<TestListener>();
    client.watch(testListenerType, "plain", plain);
    client.watch(testListenerType, l1, own);
    const streams = new Map((await Promise.all([server.nextStream(), server.nextStream()])).map((x) => [x.server, x]));
    const top = streams.get("primary:443")!;
    const mine = streams.get("own:443")!;
    await top.nextRequest();
    await mine.nextRequest();
    const sotw = protocol === "sotw";
    const topAck = await top.exchange({
      typeUrl: LDS,
      versionInfo: "7",
      nonce: "t1",
      resources: [listenerAny("plain")],
    });
    const ownAck = await mine.exchange({ typeUrl: LDS, versionInfo: "42", nonce: "o1", resources: [listenerAny(l1)] });
    expect([topAck.version, topAck.nonce, topAck.nack]).toEqual([sotw ? "7" : "", "t1", false]);
    expect([ownAck.version, ownAck.nonce, ownAck.nack]).toEqual([sotw ? "42" : "", "o1", false]);
    const nack = await mine.exchange({
      typeUrl: LDS,
      versionInfo: "43",
      nonce: "o2",
      // The test type rejects names starting with "bad": one wrapped under l1's name is an invalid l1.
      resources: [wrappedAny(l1, listenerAny("bad"))],
    });
    expect([nack.version, nack.nonce, nack.nack]).toEqual([sotw ? "42" : "", "o2", true]);
    client.watch(testListenerType, "plain2", recordingWatcher());
    const next = await top.nextRequest();
    expect(next.names).toEqual(["plain", "plain2"]);
    expect([next.version, next.nonce]).toEqual(sotw ? ["7", "t1"] : ["", ""]);
    const topAck2 = await top.exchange({
      typeUrl: LDS,
      versionInfo: "8",
      nonce: "t2",
      resources: [listenerAny("plain"), listenerAny("plain2")],
    });
    expect([topAck2.version, topAck2.nonce, topAck2.nack]).toEqual([sotw ? "8" : "", "t2", false]);
    expect(mine.requests.length).toBe(3);
    await flush();
    expect(summarize(plain.take())).toEqual(["resource:7:plain"]);
    expect(summarize(own.take())).toEqual([`resource:42:${l1}`, "ambient:INVALID_ARGUMENT:nacked"]);
  });

  it("lets an authority without servers share the top-level stream: one request holds both names", async () => {
    const { client, server } = start();
    client.watch(testListenerType, "plain", recordingWatcher());
    client.watch(testListenerType, `xdstp://shared.example/${LISTENER}/s1`, recordingWatcher());
    const stream = await server.nextStream();
    const first = await stream.nextRequest();
    expect(first.names).toEqual(["plain", `xdstp://shared.example/${LISTENER}/s1`]);
    expect(server.streams.length).toBe(1);
  });

  it("shares one channel between authorities whose servers are the same config", async () => {
    const t = setup({
      protocol,
      bootstrap: {
        authorities: {
          "same.example": { xds_servers: [{ server_uri: "primary:443", channel_creds: [{ type: "insecure" }] }] },
        },
      },
    });
    t.client.watch(testListenerType, "plain", recordingWatcher());
    t.client.watch(testListenerType, `xdstp://same.example/${LISTENER}/x`, recordingWatcher());
    const stream = await t.server.nextStream();
    expect((await stream.nextRequest()).names).toEqual(["plain", `xdstp://same.example/${LISTENER}/x`]);
    await flush();
    expect(t.server.streams.length).toBe(1);
  });

  it("canonicalises context parameters, so reordered names are one subscription", async () => {
    const { client, server } = start();
    const w1 = recordingWatcher<TestListener>();
    const w2 = recordingWatcher<TestListener>();
    const canonical = `xdstp://shared.example/${LISTENER}/s?a=1&b=2`;
    const reordered = `xdstp://shared.example/${LISTENER}/s?b=2&a=1`;
    client.watch(testListenerType, reordered, w1);
    client.watch(testListenerType, canonical, w2);
    const stream = await server.nextStream();
    expect((await stream.nextRequest()).names).toEqual([canonical]);
    expect(csdsRows(client).map((r) => r.name)).toEqual([canonical]);
    // The server names the resource in yet another order: it is still the one subscription.
    await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n", resources: [listenerAny(reordered)] });
    await flush();
    expect(summarize(w1.take())).toEqual([`resource:1:${reordered}`]);
    expect(summarize(w2.take())).toEqual([`resource:1:${reordered}`]);
    expect(csdsRows(client).map((r) => [r.name, r.status])).toEqual([[canonical, "ACKED"]]);
  });

  it("fails a watch on an unknown authority with FAILED_PRECONDITION and opens no stream", async () => {
    const { client, server } = start();
    const w = recordingWatcher<TestListener>();
    client.watch(testListenerType, `xdstp://nowhere.example/${LISTENER}/x`, w);
    await flush();
    const events = w.take();
    expect(summarize(events)).toEqual(["error:FAILED_PRECONDITION:unknown_authority"]);
    expect(events[0]?.kind === "error" && events[0].error.code).toBe(9);
    expect(events[0]?.kind === "error" && events[0].error.message).toContain(`(node ID: ${NODE_ID})`);
    expect(server.streams.length).toBe(0);
  });

  it.each([
    ["xdstp://x", "has no resource type"],
    [`xdstp:/own.example/${LISTENER}/x`, "does not start with xdstp://"],
    ["xdstp://own.example/envoy.config.cluster.v3.Cluster/x", "watched as envoy.config.listener.v3.Listener"],
  ])("fails an unparseable name %s with INVALID_ARGUMENT", async (name, reason) => {
    const { client } = start();
    const w = recordingWatcher<TestListener>();
    client.watch(testListenerType, name, w);
    await flush();
    const events = w.take();
    expect(summarize(events)).toEqual(["error:INVALID_ARGUMENT:invalid_name"]);
    expect(events[0]?.kind === "error" && events[0].error.message).toContain(reason);
  });

  it("reports a failing authority server only to that authority's watchers", async () => {
    const { client, server } = start();
    const old = recordingWatcher<TestListener>();
    const own = recordingWatcher<TestListener>();
    client.watch(testListenerType, "plain", old);
    client.watch(testListenerType, `xdstp://own.example/${LISTENER}/l1`, own);
    await server.nextStream();
    await server.nextStream();
    const mine = server.streams.find((s) => s.server === "own:443")!;
    await mine.nextRequest();
    mine.fail(14, "down");
    await flush();
    expect(summarize(own.take())).toEqual(["error:UNAVAILABLE:connection"]);
    expect(old.take()).toEqual([]);
  });
});
