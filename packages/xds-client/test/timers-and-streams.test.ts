// The does-not-exist timer (A57, A88), the connect deadline, and the stream's life: reconnects, connectivity errors,
// recovery, backoff; in both protocols, on a virtual clock with an in-memory stream.
import { describe, expect, it } from "vitest";
import type { Protocol } from "./support/fake-transport.js";
import { csdsRows, csdsStatuses, NODE_ID, setup } from "./support/harness.js";
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

describe.each(["sotw", "delta"] as const)("%s ADS", (protocol: Protocol) => {
  const start = (options: Parameters<typeof setup>[0] = {}) => setup({ protocol, ...options });

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
      // CSDS: DOES_NOT_EXIST with details only (no version, no time), no config.
      expect(csdsRows(client)).toEqual([
        { name: "A", status: "DOES_NOT_EXIST", version: "", hasConfig: false, error: "|resource A does not exist" },
      ]);
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
      expect(clock.pending()).toEqual([]);
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
      // A reconnect after a response: every name, no nonce, the node again; SotW with the last ACKed version,
      // delta with the version of each cached resource.
      expect(resubscribe).toMatchObject({ nonce: "", node: true, names: ["cached", "uncached"] });
      if (protocol === "sotw") expect(resubscribe.version).toBe("1");
      else expect(resubscribe.initialVersions).toEqual({ cached: "1" });
      await flush();
      expect(clock.pending()).toEqual([15_000]);
      // The first stream's timer died with it: 10 s + 10 s is not 15 s since the new subscription.
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
      expect(csdsRows(client)).toEqual([
        { name: "A", status: "ACKED", version: "1", hasConfig: true, error: undefined },
      ]);
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
      expect(csdsRows(client)).toEqual([
        {
          name: "A",
          status: "TIMEOUT",
          version: "",
          hasConfig: false,
          error: "|timeout obtaining resource A from xDS server",
        },
      ]);
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

    it("belongs to one call: the timers of a failed call die with it and the next call starts its own", async () => {
      const { client, server, clock } = start();
      const watchers = ["A", "B", "C"].map((name) => {
        const w = recordingWatcher<TestEndpoints>();
        client.watch(testEndpointsType, name, w);
        return w;
      });
      const first = await server.nextStream();
      await first.nextRequest();
      await flush();
      // The subscriptions of one request share one clock timer.
      expect(clock.pending()).toEqual([15_000]);
      await clock.advance(5_000);
      first.fail(14, "gone");
      await flush();
      // Only the channel's retry timer is left.
      expect(clock.pending()).toEqual([1_000]);
      await clock.advance(1_000);
      for (const w of watchers) w.take();
      const second = await server.nextStream();
      await second.nextRequest();
      await flush();
      expect(clock.pending()).toEqual([15_000]);
      await second.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("B")] });
      watchers[1]!.take();
      // 15 s after the second call sent them, A and C do not exist; B, answered, hears nothing more.
      await clock.advance(14_999);
      expect(watchers.map((w) => w.take().length)).toEqual([0, 0, 0]);
      await clock.advance(1);
      expect(watchers.map((w) => summarize(w.take()))).toEqual([
        ["error:NOT_FOUND:does_not_exist"],
        [],
        ["error:NOT_FOUND:does_not_exist"],
      ]);
      expect(clock.pending()).toEqual([]);
    });

    it("stops the timer of a subscription that is cancelled, and the clock timer with the last one", async () => {
      const { client, server, clock } = start();
      const cancelA = client.watch(testEndpointsType, "A", recordingWatcher());
      const cancelB = client.watch(testEndpointsType, "B", recordingWatcher());
      const stream = await server.nextStream();
      await stream.nextRequest();
      await flush();
      expect(clock.pending()).toEqual([15_000]);
      await clock.advance(1_000);
      client.watch(testEndpointsType, "C", recordingWatcher());
      await stream.nextRequest();
      await flush();
      expect(clock.pending()).toEqual([14_000, 15_000]);
      cancelA();
      await stream.nextRequest();
      expect(clock.pending()).toEqual([14_000, 15_000]);
      cancelB();
      await stream.nextRequest();
      expect(clock.pending()).toEqual([15_000]);
    });

    it("answers the subscriptions of one request one by one: each expires unless its own resource came", async () => {
      const { client, server, clock } = start();
      const a = recordingWatcher<TestEndpoints>();
      const b = recordingWatcher<TestEndpoints>();
      client.watch(testEndpointsType, "A", a);
      client.watch(testEndpointsType, "B", b);
      const stream = await server.nextStream();
      await stream.nextRequest();
      await flush();
      await clock.advance(10_000);
      await stream.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("A")] });
      expect(summarize(a.take())).toEqual(["resource:1:A"]);
      await clock.advance(5_000);
      expect(summarize(a.take())).toEqual([]);
      expect(summarize(b.take())).toEqual(["error:NOT_FOUND:does_not_exist"]);
    });
  });

  describe("the connect deadline", () => {
    it("starts no does-not-exist timer before the stream is established, and fails the call at 20 s", async () => {
      const { client, server, clock, metrics } = start();
      server.holdEstablishment(true);
      const w = recordingWatcher<TestEndpoints>();
      client.watch(testEndpointsType, "A", w);
      const stream = await server.nextStream();
      await stream.nextRequest();
      await flush();
      expect(clock.pending()).toEqual([20_000]);
      await clock.advance(19_999);
      expect(w.take()).toEqual([]);
      await clock.advance(1);
      const events = w.take();
      expect(summarize(events)).toEqual(["error:UNAVAILABLE:connection"]);
      expect(events[0]?.kind === "error" && events[0].error.message).toBe(
        `[UNAVAILABLE] xDS channel for server primary:443: xDS call failed with no responses received; status: DEADLINE_EXCEEDED: no HTTP/2 connection within the connect deadline of 20000 ms (node ID: ${NODE_ID})`,
      );
      expect(stream.cancelled).toBe(true);
      expect(metrics.counter("grpc.xds_client.server_failure")).toBe(1);
      expect(csdsStatuses(client)).toEqual(["REQUESTED"]);
      // The retry is a new call with its own deadline.
      expect(clock.pending()).toEqual([1_000]);
    });

    it("starts the does-not-exist timer once the stream is established", async () => {
      const { client, server, clock } = start({ connectTimeoutMs: 5_000 });
      server.holdEstablishment(true);
      const w = recordingWatcher<TestEndpoints>();
      client.watch(testEndpointsType, "A", w);
      const stream = await server.nextStream();
      await stream.nextRequest();
      await flush();
      expect(clock.pending()).toEqual([5_000]);
      await clock.advance(3_000);
      stream.establish();
      await flush();
      expect(clock.pending()).toEqual([15_000]);
      await clock.advance(15_000);
      expect(summarize(w.take())).toEqual(["error:NOT_FOUND:does_not_exist"]);
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
      expect([...metrics.counters]).toEqual([
        ["grpc.xds_client.server_failure{grpc.target=#server,grpc.xds.server=primary:443}", 1],
      ]);
      expect(metrics.gauges().get("connected{primary:443}")).toBe(0);
      expect(csdsStatuses(client)).toEqual(["REQUESTED"]);
      // random() = 0.5 means no jitter: the first retry waits 1 s.
      expect(clock.pending()).toEqual([1_000]);
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
      expect(csdsRows(client)[0]).toMatchObject({ status: "ACKED", error: undefined });
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

    it("keeps A78 connected at 1 across streams that end after a response (clean or not) until one fails with none", async () => {
      // Steps: a response on stream 1 (connected 1); the server ends stream 1 cleanly, then stream 2 with an
      // error after its own response: connected stays 1 while the next streams wait for responses; stream 3 fails
      // before any response: the server is unreachable, connected 0; stream 4's response sets it back to 1.
      const { client, server, clock, metrics } = start();
      const connected = () => metrics.gauges().get("connected{primary:443}");
      client.watch(testEndpointsType, "A", recordingWatcher());
      const first = await server.nextStream();
      await first.nextRequest();
      expect(connected()).toBe(0);
      await first.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("A")] });
      expect(connected()).toBe(1);
      first.end();
      const second = await server.nextStream();
      await second.nextRequest();
      expect(connected()).toBe(1);
      await second.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n2", resources: [endpointsAny("A")] });
      second.fail(14, "server restart");
      const third = await server.nextStream();
      await third.nextRequest();
      expect(connected()).toBe(1);
      third.fail(14, "connection refused");
      await flush();
      expect(connected()).toBe(0);
      await clock.advance(clock.pending()[0]!);
      const fourth = await server.nextStream();
      await fourth.nextRequest();
      expect(connected()).toBe(0);
      await fourth.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n3", resources: [endpointsAny("A")] });
      expect(connected()).toBe(1);
    });

    it("jitters each backoff by up to ±20 % with the client's random source (scenario 41)", async () => {
      // Steps: the random source returns 0, 1, 0.25, 0.9, ... in turn; each failed attempt's retry waits the base
      // delay (1 s, ×1.6 each time) times 1 + 0.2 × (2r − 1): 0.8×, 1.2×, 0.9×, 1.16×, ...
      const sequence = [0, 1, 0.25, 0.9, 0.5, 0.1];
      let next = 0;
      const t = start({ random: () => sequence[next++ % sequence.length]! });
      t.client.watch(testEndpointsType, "A", recordingWatcher());
      const delays: number[] = [];
      for (let i = 0; i < sequence.length; i++) {
        const stream = await t.server.nextStream();
        await stream.nextRequest();
        stream.fail(14, "down");
        await flush();
        const wait = t.clock.pending()[0]!;
        delays.push(wait);
        await t.clock.advance(wait);
      }
      const base = [1_000, 1_600, 2_560, 4_096, 6_553.6, 10_485.76];
      expect(delays).toEqual(base.map((b, i) => Math.round(b * (1 + 0.2 * (2 * sequence[i]! - 1)))));
      expect(delays.slice(0, 4)).toEqual([800, 1_920, 2_304, 4_751]);
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

    /** Steps shared by the recovery tests: A and B cached, then an outage, then a new stream. */
    async function outageThenReconnect(t: ReturnType<typeof start>) {
      const first = await t.server.nextStream();
      await first.nextRequest();
      await first.exchange({
        typeUrl: EDS,
        versionInfo: "1",
        nonce: "n1",
        resources: [endpointsAny("A"), endpointsAny("B")],
      });
      first.end();
      const second = await t.server.nextStream();
      await second.nextRequest();
      second.fail(14, "down");
      await flush();
      await t.clock.advance(1_000);
      const third = await t.server.nextStream();
      await third.nextRequest();
      return third;
    }

    it("signals recovery as the end of the ambient error, once, and not by delivering the resource again", async () => {
      // Steps: A and B cached; the server becomes unreachable (ambient UNAVAILABLE); a new stream gets a response
      // carrying only B (a delta server skips what the client already has): A's watcher hears that its error is
      // over; then the identical A arrives and tells nobody anything.
      const t = start();
      const a = recordingWatcher<TestEndpoints>();
      t.client.watch(testEndpointsType, "A", a);
      t.client.watch(testEndpointsType, "B", recordingWatcher());
      const third = await outageThenReconnect(t);
      expect(summarize(a.take())).toEqual(["resource:1:A", "ambient:UNAVAILABLE:connection"]);
      await third.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "m1", resources: [endpointsAny("B")] });
      await flush();
      expect(summarize(a.take())).toEqual(["cleared"]);
      await third.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "m2", resources: [endpointsAny("A")] });
      await flush();
      expect(a.take()).toEqual([]);
      expect(t.metrics.gauges().get("connected{primary:443}")).toBe(1);
    });

    it("gives a watcher without onAmbientErrorCleared the resource again on recovery", async () => {
      const t = start();
      const old = recordingWatcher<TestEndpoints>({ clears: false });
      t.client.watch(testEndpointsType, "A", old);
      t.client.watch(testEndpointsType, "B", recordingWatcher());
      const third = await outageThenReconnect(t);
      await third.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "m1", resources: [endpointsAny("B")] });
      await flush();
      expect(summarize(old.take())).toEqual(["resource:1:A", "ambient:UNAVAILABLE:connection", "resource:1:A"]);
    });

    it("gives a watcher that starts after recovery the resource and no stale channel error", async () => {
      const t = start();
      t.client.watch(testEndpointsType, "A", recordingWatcher());
      t.client.watch(testEndpointsType, "B", recordingWatcher());
      const third = await outageThenReconnect(t);
      await third.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "m1", resources: [endpointsAny("B")] });
      const late = recordingWatcher<TestEndpoints>();
      t.client.watch(testEndpointsType, "A", late);
      await flush();
      expect(summarize(late.take())).toEqual(["resource:1:A"]);
    });
  });
});

describe("sotw ADS only", () => {
  it("keeps waiting when an LDS response omits a requested name that was never cached", async () => {
    const { client, server, clock } = setup();
    const a = recordingWatcher<TestListener>();
    const b = recordingWatcher<TestListener>();
    client.watch(testListenerType, "A", a);
    client.watch(testListenerType, "B", b);
    const stream = await server.nextStream();
    await stream.nextRequest();
    await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A")] });
    await flush();
    expect(b.take()).toEqual([]);
    expect(csdsStatuses(client)).toEqual(["ACKED", "REQUESTED"]);
    await clock.advance(15_000);
    expect(summarize(b.take())).toEqual(["error:NOT_FOUND:does_not_exist"]);
  });
});
