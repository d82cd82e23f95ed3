// The does-not-exist timer (A57, A88) and the stream's life: reconnects, connectivity errors, backoff (conformance
// 17-24 and 37-42), on a virtual clock with an in-memory stream.
import { ClientResourceStatus } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import { describe, expect, it } from "vitest";
import { NODE_ID, setup } from "./support/harness.js";
import { flush, recordingWatcher, summarize } from "./support/recorder.js";
import {
  endpointsAny,
  listenerAny,
  type TestEndpoints,
  type TestListener,
  testEndpointsType,
  testListenerType,
} from "./support/test-types.js";

const LDS = testListenerType.typeUrl;
const EDS = testEndpointsType.typeUrl;

const start = setup;

function status(client: ReturnType<typeof setup>["client"]) {
  return client.dumpResources().genericXdsConfigs.map((c) => ClientResourceStatus[c.clientStatus]);
}

describe("the does-not-exist timer", () => {
  it("fires at exactly 15 s after the subscription was sent", async () => {
    const { client, server, clock, metrics } = start();
    const w = recordingWatcher<TestListener>();
    client.watch(testListenerType, "A", w);
    const stream = await server.nextStream();
    await stream.nextRequest();
    await clock.advance(14_999);
    expect(w.take()).toEqual([]);
    await clock.advance(1);
    const events = w.take();
    expect(summarize(events)).toEqual(["error:NOT_FOUND:does_not_exist"]);
    expect(events[0]?.kind === "error" && events[0].error.message).toBe(
      `[NOT_FOUND] resource A does not exist (node ID: ${NODE_ID})`,
    );
    expect(status(client)).toEqual(["DOES_NOT_EXIST"]);
    expect(client.dumpResources().genericXdsConfigs[0]?.xdsConfig).toBeUndefined();
    expect(metrics.gauges().get("resources{#old,does_not_exist}")).toBe(1);
  });

  it("is cancelled by a valid response, so no late does-not-exist", async () => {
    const { client, server, clock } = start();
    const w = recordingWatcher<TestListener>();
    client.watch(testListenerType, "A", w);
    const stream = await server.nextStream();
    await stream.nextRequest();
    await clock.advance(10_000);
    await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A")] });
    await clock.advance(60_000);
    expect(summarize(w.take())).toEqual(["resource:1:A"]);
  });

  it("restarts on a new stream only for names that are not cached", async () => {
    const { client, server, clock } = start();
    const cached = recordingWatcher<TestEndpoints>();
    const uncached = recordingWatcher<TestEndpoints>();
    client.watch(testEndpointsType, "cached", cached);
    client.watch(testEndpointsType, "uncached", uncached);
    const first = await server.nextStream();
    await first.nextRequest();
    await first.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("cached")] });
    await clock.advance(10_000);
    first.end();
    const second = await server.nextStream();
    const resubscribe = await second.nextRequest();
    // A reconnect after a response: last ACKed version, empty nonce, every name, node again.
    expect(resubscribe.versionInfo).toBe("1");
    expect(resubscribe.responseNonce).toBe("");
    expect([...resubscribe.resourceNames].sort()).toEqual(["cached", "uncached"]);
    expect(resubscribe.node?.id).toBe(NODE_ID);
    // The first stream's timer was cancelled: 10 s + 10 s is not 15 s since the new subscription.
    await clock.advance(10_000);
    expect(uncached.take()).toEqual([]);
    await clock.advance(5_000);
    expect(summarize(uncached.take())).toEqual(["error:NOT_FOUND:does_not_exist"]);
    expect(summarize(cached.take())).toEqual(["resource:1:cached"]);
  });

  it("delivers a resource that arrives after does-not-exist, and CSDS becomes ACKED", async () => {
    const { client, server, clock } = start();
    const w = recordingWatcher<TestEndpoints>();
    client.watch(testEndpointsType, "A", w);
    const stream = await server.nextStream();
    await stream.nextRequest();
    await clock.advance(15_000);
    await stream.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("A")] });
    await flush();
    expect(summarize(w.take())).toEqual(["error:NOT_FOUND:does_not_exist", "resource:1:A"]);
    expect(status(client)).toEqual(["ACKED"]);
  });

  it("takes 30 s and reports UNAVAILABLE and TIMEOUT with resource_timer_is_transient_error", async () => {
    const { client, server, clock, metrics } = start({ serverFeatures: ["resource_timer_is_transient_error"] });
    const w = recordingWatcher<TestEndpoints>();
    client.watch(testEndpointsType, "A", w);
    const stream = await server.nextStream();
    await stream.nextRequest();
    await clock.advance(29_999);
    expect(w.take()).toEqual([]);
    await clock.advance(1);
    expect(summarize(w.take())).toEqual(["error:UNAVAILABLE:timeout"]);
    expect(status(client)).toEqual(["TIMEOUT"]);
    expect(client.dumpResources().genericXdsConfigs[0]?.errorState?.details).toBe(
      "timeout obtaining resource A from xDS server",
    );
    expect(metrics.gauges().get("resources{#old,timeout}")).toBe(1);
  });

  it("stays at 15 s and does-not-exist when A88 is off, even with the server feature", async () => {
    const { client, server, clock } = start({
      serverFeatures: ["resource_timer_is_transient_error"],
      features: { dataErrorHandling: false },
    });
    const w = recordingWatcher<TestEndpoints>();
    client.watch(testEndpointsType, "A", w);
    const stream = await server.nextStream();
    await stream.nextRequest();
    await clock.advance(15_000);
    expect(summarize(w.take())).toEqual(["error:NOT_FOUND:does_not_exist"]);
  });

  it("keeps waiting when an LDS response omits a requested name that was never cached", async () => {
    const { client, server, clock } = start();
    const a = recordingWatcher<TestListener>();
    const b = recordingWatcher<TestListener>();
    client.watch(testListenerType, "A", a);
    client.watch(testListenerType, "B", b);
    const stream = await server.nextStream();
    await stream.nextRequest();
    await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A")] });
    await flush();
    expect(b.take()).toEqual([]);
    expect(status(client)).toEqual(["ACKED", "REQUESTED"]);
    await clock.advance(15_000);
    expect(summarize(b.take())).toEqual(["error:NOT_FOUND:does_not_exist"]);
  });
});

describe("stream and connectivity (A57)", () => {
  it("reports a stream that fails before any response to uncached watchers, counts a server failure, and retries with backoff", async () => {
    const { client, server, clock, metrics } = start();
    const w = recordingWatcher<TestEndpoints>();
    client.watch(testEndpointsType, "A", w);
    const first = await server.nextStream();
    await first.nextRequest();
    first.fail(14, "connection refused");
    await flush();
    const events = w.take();
    expect(summarize(events)).toEqual(["error:UNAVAILABLE:connection"]);
    expect(events[0]?.kind === "error" && events[0].error.message).toBe(
      `[UNAVAILABLE] xDS channel for server primary:443: xDS call failed with no responses received; status: UNAVAILABLE: connection refused (node ID: ${NODE_ID})`,
    );
    expect(metrics.counter("grpc.xds_client.server_failure")).toBe(1);
    expect(metrics.gauges().get("connected{primary:443}")).toBe(0);
    // random() = 0.5 means no jitter: the first retry waits 1 s.
    expect(clock.pending()).toContain(1_000);
    await clock.advance(999);
    expect(server.streams.length).toBe(1);
    await clock.advance(1);
    expect(server.streams.length).toBe(2);
  });

  it("reports the connectivity error as ambient to watchers with a cached resource", async () => {
    const { client, server } = start();
    const w = recordingWatcher<TestEndpoints>();
    client.watch(testEndpointsType, "A", w);
    const first = await server.nextStream();
    await first.nextRequest();
    await first.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("A")] });
    first.end();
    const second = await server.nextStream();
    await second.nextRequest();
    second.fail(14, "gone");
    await flush();
    expect(summarize(w.take())).toEqual(["resource:1:A", "ambient:UNAVAILABLE:connection"]);
  });

  it("does not report a stream that ends after a response, and reconnects at once", async () => {
    const { client, server, clock } = start();
    const w = recordingWatcher<TestEndpoints>();
    client.watch(testEndpointsType, "A", w);
    const first = await server.nextStream();
    await first.nextRequest();
    await first.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("A")] });
    first.fail(14, "server restart");
    await flush();
    expect(server.streams.length).toBe(2);
    expect(clock.pending()).toEqual([]);
    expect(summarize(w.take())).toEqual(["resource:1:A"]);
  });

  it("grows the backoff 1.6x per failure up to 120 s and resets it after a response", async () => {
    const t = start();
    const { client, server, clock } = t;
    client.watch(testEndpointsType, "A", recordingWatcher());
    const delays: number[] = [];
    for (let i = 0; i < 12; i++) {
      const stream = await server.nextStream();
      await stream.nextRequest();
      stream.fail(14, "down");
      await flush();
      const wait = clock.pending()[0]!;
      delays.push(wait);
      await clock.advance(wait);
    }
    expect(delays.slice(0, 4)).toEqual([1_000, 1_600, 2_560, 4_096]);
    expect(Math.max(...delays)).toBe(120_000);
    // A78: server_failure counts the healthy → unhealthy transition, not every failed attempt.
    expect(t.metrics.counter("grpc.xds_client.server_failure")).toBe(1);
    const ok = await server.nextStream();
    await ok.nextRequest();
    await ok.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("A")] });
    ok.end();
    const next = await server.nextStream();
    await next.nextRequest();
    next.fail(14, "down again");
    await flush();
    expect(clock.pending()[0]).toBe(1_000);
    expect(t.metrics.counter("grpc.xds_client.server_failure")).toBe(2);
  });

  it("gives a new watcher the cached resource and then the current channel error", async () => {
    const { client, server } = start();
    client.watch(testEndpointsType, "A", recordingWatcher());
    const first = await server.nextStream();
    await first.nextRequest();
    await first.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("A")] });
    first.end();
    const second = await server.nextStream();
    await second.nextRequest();
    second.fail(14, "down");
    await flush();
    const late = recordingWatcher<TestEndpoints>();
    client.watch(testEndpointsType, "A", late);
    const fresh = recordingWatcher<TestEndpoints>();
    client.watch(testEndpointsType, "B", fresh);
    await flush();
    expect(summarize(late.take())).toEqual(["resource:1:A", "ambient:UNAVAILABLE:connection"]);
    expect(summarize(fresh.take())).toEqual(["error:UNAVAILABLE:connection"]);
  });

  it("clears an ambient error when the same resource arrives again", async () => {
    const { client, server, clock } = start();
    const w = recordingWatcher<TestEndpoints>();
    client.watch(testEndpointsType, "A", w);
    const first = await server.nextStream();
    await first.nextRequest();
    await first.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("A")] });
    first.end();
    const second = await server.nextStream();
    await second.nextRequest();
    second.fail(14, "down");
    await flush();
    await clock.advance(1_000);
    const third = await server.nextStream();
    await third.nextRequest();
    await third.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "m1", resources: [endpointsAny("A")] });
    await flush();
    expect(summarize(w.take())).toEqual(["resource:1:A", "ambient:UNAVAILABLE:connection", "resource:1:A"]);
  });
});
