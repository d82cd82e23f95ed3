// A71 fallback across servers, in both protocols, on an in-memory transport and a virtual clock.
import { describe, expect, it } from "vitest";
import type { FakeStream, Protocol } from "./support/fake-transport.js";
import { csdsRows, setup } from "./support/harness.js";
import { flush, recordingWatcher, summarize } from "./support/recorder.js";
import { endpointsAny, type TestEndpoints, testEndpointsType } from "./support/test-types.js";

const EDS = testEndpointsType.typeUrl;
const creds = [{ type: "insecure" }];

describe.each(["sotw", "delta"] as const)("%s ADS: fallback (A71)", (protocol: Protocol) => {
  function start(servers: string[], extra: Record<string, unknown> = {}, features = {}) {
    return setup({
      protocol,
      bootstrap: { xds_servers: servers.map((server_uri) => ({ server_uri, channel_creds: creds })), ...extra },
      features,
    });
  }

  function open(t: ReturnType<typeof start>, server: string): FakeStream[] {
    return t.server.streams.filter((s) => s.server === server && !s.cancelled);
  }

  it("falls back to the secondary when the primary fails with an uncached watch, subscribing every name, and tells nobody", async () => {
    const t = start(["primary:1", "secondary:2"]);
    const a = recordingWatcher<TestEndpoints>();
    t.client.watch(testEndpointsType, "A", a);
    t.client.watch(testEndpointsType, "B", recordingWatcher());
    const primary = await t.server.nextStream();
    await primary.nextRequest();
    primary.fail(14, "primary down");
    const secondary = await t.server.nextStream();
    expect(secondary.server).toBe("secondary:2");
    expect((await secondary.nextRequest()).names).toEqual(["A", "B"]);
    await flush();
    expect(a.take()).toEqual([]);
    await secondary.exchange({ typeUrl: EDS, versionInfo: "s1", nonce: "n", resources: [endpointsAny("A")] });
    await flush();
    expect(summarize(a.take())).toEqual(["resource:s1:A"]);
    expect(t.metrics.gauges()).toEqual(
      new Map([
        ["connected{primary:1}", 0],
        ["connected{secondary:2}", 1],
        ["resources{#old,acked}", 1],
        ["resources{#old,requested}", 1],
      ]),
    );
  });

  it("keeps the fallback server's does-not-exist timer when the primary's retry fails", async () => {
    // Steps: watch A; the primary fails; the secondary gets A and starts its 15 s timer; the primary's retry (1 s
    // later) fails too, which must not touch the secondary's timer; at 15 s after the secondary's subscription the
    // watcher hears does-not-exist.
    const t = start(["primary:1", "secondary:2"]);
    const a = recordingWatcher<TestEndpoints>();
    t.client.watch(testEndpointsType, "A", a);
    const primary = await t.server.nextStream();
    await primary.nextRequest();
    primary.fail(14, "primary down");
    const secondary = await t.server.nextStream();
    await secondary.nextRequest();
    await flush();
    expect(t.clock.pending()).toEqual([1_000, 15_000]);
    await t.clock.advance(1_000);
    const retry = await t.server.nextStream();
    expect(retry.server).toBe("primary:1");
    await retry.nextRequest();
    retry.fail(14, "primary still down");
    await flush();
    expect(t.clock.pending()).toEqual([1_600, 14_000]);
    await t.clock.advance(13_999);
    expect(a.take()).toEqual([]);
    await t.clock.advance(1);
    expect(summarize(a.take())).toEqual(["error:NOT_FOUND:does_not_exist"]);
    expect(csdsRows(t.client)[0]?.status).toBe("DOES_NOT_EXIST");
  });

  it("does not fall back when every watched resource is cached; watchers get an ambient error", async () => {
    const t = start(["primary:1", "secondary:2"]);
    const a = recordingWatcher<TestEndpoints>();
    t.client.watch(testEndpointsType, "A", a);
    const first = await t.server.nextStream();
    await first.nextRequest();
    await first.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n", resources: [endpointsAny("A")] });
    first.end();
    const second = await t.server.nextStream();
    await second.nextRequest();
    second.fail(14, "down");
    await flush();
    expect(t.server.streams.every((s) => s.server === "primary:1")).toBe(true);
    expect(summarize(a.take())).toEqual(["resource:1:A", "ambient:UNAVAILABLE:connection"]);
  });

  it("tells the watchers only once every server failed", async () => {
    const t = start(["primary:1", "secondary:2"]);
    const a = recordingWatcher<TestEndpoints>();
    t.client.watch(testEndpointsType, "A", a);
    const primary = await t.server.nextStream();
    await primary.nextRequest();
    primary.fail(14, "primary down");
    const secondary = await t.server.nextStream();
    await secondary.nextRequest();
    await flush();
    expect(a.take()).toEqual([]);
    secondary.fail(14, "secondary down");
    await flush();
    const events = a.take();
    expect(summarize(events)).toEqual(["error:UNAVAILABLE:connection"]);
    expect(events[0]?.kind === "error" && events[0].error.message).toContain("secondary:2");
  });

  it("switches back when the primary serves again, closing the fallback stream", async () => {
    const t = start(["primary:1", "secondary:2"]);
    const a = recordingWatcher<TestEndpoints>();
    t.client.watch(testEndpointsType, "A", a);
    const primary = await t.server.nextStream();
    await primary.nextRequest();
    primary.fail(14, "primary down");
    const secondary = await t.server.nextStream();
    await secondary.nextRequest();
    await secondary.exchange({ typeUrl: EDS, versionInfo: "s1", nonce: "n", resources: [endpointsAny("A", 1)] });
    expect(t.metrics.gauges()).toEqual(
      new Map([
        ["connected{primary:1}", 0],
        ["connected{secondary:2}", 1],
        ["resources{#old,acked}", 1],
      ]),
    );
    await t.clock.advance(1_000);
    const primaryAgain = await t.server.nextStream();
    expect(primaryAgain.server).toBe("primary:1");
    await primaryAgain.nextRequest();
    await primaryAgain.exchange({ typeUrl: EDS, versionInfo: "p1", nonce: "m", resources: [endpointsAny("A", 2)] });
    await flush();
    expect(secondary.cancelled).toBe(true);
    expect(summarize(a.take())).toEqual(["resource:s1:A", "resource:p1:A"]);
    // The dropped fallback server is no longer reported; the primary is connected.
    expect(t.metrics.gauges()).toEqual(
      new Map([
        ["connected{primary:1}", 1],
        ["resources{#old,acked}", 1],
      ]),
    );
    expect(t.metrics.counter("grpc.xds_client.server_failure", { "grpc.xds.server": "primary:1" })).toBe(1);
    expect(t.metrics.counter("grpc.xds_client.server_failure", { "grpc.xds.server": "secondary:2" })).toBe(0);
  });

  it("walks three servers down and back up in priority order", async () => {
    const t = start(["p:1", "s:2", "t:3"]);
    t.client.watch(testEndpointsType, "A", recordingWatcher());
    const p = await t.server.nextStream();
    await p.nextRequest();
    p.fail(14, "p down");
    const s = await t.server.nextStream();
    await s.nextRequest();
    s.fail(14, "s down");
    const third = await t.server.nextStream();
    expect(third.server).toBe("t:3");
    await third.nextRequest();
    await third.exchange({ typeUrl: EDS, versionInfo: "t1", nonce: "n", resources: [endpointsAny("A")] });
    // Both p and s retry after 1 s; only s answers this time.
    await t.clock.advance(1_000);
    const retries = t.server.streams.slice(3);
    const sAgain = retries.find((x) => x.server === "s:2")!;
    const pAgain = retries.find((x) => x.server === "p:1")!;
    await sAgain.nextRequest();
    await sAgain.exchange({ typeUrl: EDS, versionInfo: "s1", nonce: "n", resources: [endpointsAny("A")] });
    await flush();
    expect(third.cancelled).toBe(true);
    expect(sAgain.cancelled).toBe(false);
    expect(t.metrics.gauges().get("connected{s:2}")).toBe(1);
    expect(t.metrics.gauges().has("connected{t:3}")).toBe(false);
    await pAgain.nextRequest();
    await pAgain.exchange({ typeUrl: EDS, versionInfo: "p1", nonce: "n", resources: [endpointsAny("A")] });
    await flush();
    expect(sAgain.cancelled).toBe(true);
    expect(pAgain.cancelled).toBe(false);
    expect([...t.metrics.gauges()].filter(([k]) => k.startsWith("connected"))).toEqual([["connected{p:1}", 1]]);
  });

  it("keeps each authority's server list independent", async () => {
    const t = start(["top:1"], {
      authorities: {
        "a.example": {
          xds_servers: [
            { server_uri: "a1:1", channel_creds: creds },
            { server_uri: "a2:2", channel_creds: creds },
          ],
        },
      },
    });
    const top = recordingWatcher<TestEndpoints>();
    t.client.watch(testEndpointsType, "plain", top);
    t.client.watch(
      testEndpointsType,
      "xdstp://a.example/envoy.config.endpoint.v3.ClusterLoadAssignment/x",
      recordingWatcher(),
    );
    await t.server.nextStream();
    await t.server.nextStream();
    const a1 = t.server.streams.find((s) => s.server === "a1:1")!;
    await a1.nextRequest();
    a1.fail(14, "a1 down");
    const a2 = await t.server.nextStream();
    expect(a2.server).toBe("a2:2");
    expect((await a2.nextRequest()).names).toEqual([
      "xdstp://a.example/envoy.config.endpoint.v3.ClusterLoadAssignment/x",
    ]);
    await flush();
    expect(top.take()).toEqual([]);
    expect(open(t, "top:1").length).toBe(1);
  });

  it("uses only the first server when fallback is off", async () => {
    const t = start(["primary:1", "secondary:2"], {}, { fallback: false });
    const a = recordingWatcher<TestEndpoints>();
    t.client.watch(testEndpointsType, "A", a);
    const primary = await t.server.nextStream();
    await primary.nextRequest();
    primary.fail(14, "primary down");
    await flush();
    expect(t.server.streams.length).toBe(1);
    expect(summarize(a.take())).toEqual(["error:UNAVAILABLE:connection"]);
  });
});
