// Subscription, ACK and NACK (A46), in both ADS protocols, checked against exact requests, watcher events, CSDS and
// metrics after each step. Fine-grained: an in-memory stream; the same flows over real HTTP/2 are in
// ads-over-http2.test.ts.

import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { describe, expect, it } from "vitest";
import type { Protocol, RequestView } from "./support/fake-transport.js";
import { csdsRows, csdsStatuses, NODE_ID, setup } from "./support/harness.js";
import { flush, recordingWatcher, summarize } from "./support/recorder.js";
import {
  endpointsAny,
  listenerAny,
  type TestEndpoints,
  type TestListener,
  testEndpointsType,
  testListenerType,
  typeName,
} from "./support/test-types.js";

const LDS = testListenerType.typeUrl;
const EDS = testEndpointsType.typeUrl;

/** What every test asserts of a request, whichever the protocol. */
function req(r: RequestView) {
  return { type: r.typeUrl, version: r.version, nonce: r.nonce, names: r.names, nack: r.nack, node: r.node };
}

describe.each(["sotw", "delta"] as const)("%s ADS", (protocol: Protocol) => {
  const start = (options: Parameters<typeof setup>[0] = {}) => setup({ protocol, ...options });
  /** The version a SotW request carries; delta requests carry none. */
  const v = (version: string) => (protocol === "sotw" ? version : "");

  describe("subscribing and ACKing", () => {
    it("dumps an empty config list, with the node, before any watch", async () => {
      const { client, server } = start();
      const dump = client.dumpResources();
      expect(dump.genericXdsConfigs).toEqual([]);
      expect(dump.node?.id).toBe(NODE_ID);
      expect(dump.clientScope).toBe("#server");
      expect(server.streams.length).toBe(0);
    });

    it("opens a stream whose first request carries the node, the type and the name, with no version or nonce", async () => {
      const { client, server } = start();
      client.watch(testListenerType, "A", recordingWatcher());
      const stream = await server.nextStream();
      expect(stream.protocol).toBe(protocol);
      const first = await stream.nextRequest();
      expect(req(first)).toEqual({ type: LDS, version: "", nonce: "", names: ["A"], nack: false, node: true });
      const node = first.raw.node;
      expect(node?.id).toBe(NODE_ID);
      expect(node?.clientFeatures).toContain("xds.config.resource-in-sotw");
      expect(csdsRows(client)).toEqual([
        { name: "A", status: "REQUESTED", version: "", hasConfig: false, error: undefined },
      ]);
    });

    it("delivers a resource, ACKs it, and shows ACKED in CSDS and metrics", async () => {
      const { client, server, metrics } = start();
      const w = recordingWatcher<TestListener>();
      client.watch(testListenerType, "A", w);
      const stream = await server.nextStream();
      await stream.nextRequest();
      const ack = await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A")] });
      expect(req(ack)).toEqual({ type: LDS, version: v("1"), nonce: "n1", names: ["A"], nack: false, node: false });
      expect(ack.added).toEqual([]);
      await flush();
      expect(summarize(w.take())).toEqual(["resource:1:A"]);
      const [entry] = client.dumpResources().genericXdsConfigs;
      expect(entry?.lastUpdated).toBeDefined();
      expect(csdsRows(client)).toEqual([
        { name: "A", status: "ACKED", version: "1", hasConfig: true, error: undefined },
      ]);
      expect([...metrics.counters]).toEqual([
        [
          `grpc.xds_client.resource_updates_valid{grpc.target=#server,grpc.xds.resource_type=${typeName(LDS)},grpc.xds.server=primary:443}`,
          1,
        ],
      ]);
      expect(metrics.gaugeSeries()).toEqual(
        new Map([
          ["grpc.xds_client.connected{grpc.target=#server,grpc.xds.server=primary:443}", 1],
          [
            `grpc.xds_client.resources{grpc.target=#server,grpc.xds.authority=#old,grpc.xds.cache_state=acked,grpc.xds.resource_type=${typeName(LDS)}}`,
            1,
          ],
        ]),
      );
    });

    it("adds a second name with one request", async () => {
      const { client, server } = start();
      client.watch(testListenerType, "A", recordingWatcher());
      const stream = await server.nextStream();
      await stream.nextRequest();
      await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A")] });
      client.watch(testListenerType, "B", recordingWatcher());
      const next = await stream.nextRequest();
      expect(next.names).toEqual(["A", "B"]);
      expect(next.added).toEqual(["B"]);
      // SotW repeats the whole list with the last version and nonce; delta sends only the change.
      expect([next.version, next.nonce]).toEqual(protocol === "sotw" ? ["1", "n1"] : ["", ""]);
      await flush();
      expect(stream.requests.length).toBe(3);
    });

    it("coalesces every watch made in one tick into one request per type", async () => {
      const { client, server } = start();
      for (let i = 0; i < 100; i++) client.watch(testEndpointsType, `e${i}`, recordingWatcher());
      client.watch(testListenerType, "A", recordingWatcher());
      const stream = await server.nextStream();
      await flush();
      expect(stream.requests.map((r) => [r.typeUrl, r.names.length])).toEqual([
        [EDS, 100],
        [LDS, 1],
      ]);
    });

    it("serves a second watcher from the cache without a new request", async () => {
      const { client, server } = start();
      client.watch(testListenerType, "A", recordingWatcher());
      const stream = await server.nextStream();
      await stream.nextRequest();
      await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A")] });
      const second = recordingWatcher<TestListener>();
      client.watch(testListenerType, "A", second);
      await flush();
      expect(summarize(second.take())).toEqual(["resource:1:A"]);
      expect(stream.requests.length).toBe(2);
    });

    it("leaves other names alone when an EDS response carries only one of them", async () => {
      const { client, server } = start();
      const a = recordingWatcher<TestEndpoints>();
      const b = recordingWatcher<TestEndpoints>();
      client.watch(testEndpointsType, "A", a);
      client.watch(testEndpointsType, "B", b);
      const stream = await server.nextStream();
      await stream.nextRequest();
      await stream.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("A")] });
      await stream.exchange({ typeUrl: EDS, versionInfo: "2", nonce: "n2", resources: [endpointsAny("B")] });
      await flush();
      expect(summarize(a.take())).toEqual(["resource:1:A"]);
      expect(summarize(b.take())).toEqual(["resource:2:B"]);
      expect(csdsRows(client).map((c) => [c.name, c.status, c.version])).toEqual([
        ["A", "ACKED", "1"],
        ["B", "ACKED", "2"],
      ]);
    });

    it("notifies nobody for an identical resource but still ACKs it and records its version", async () => {
      const { client, server } = start();
      const w = recordingWatcher<TestListener>();
      client.watch(testListenerType, "A", w);
      const stream = await server.nextStream();
      await stream.nextRequest();
      await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A")] });
      const ack = await stream.exchange({ typeUrl: LDS, versionInfo: "2", nonce: "n2", resources: [listenerAny("A")] });
      expect(req(ack)).toMatchObject({ version: v("2"), nonce: "n2", nack: false });
      await flush();
      expect(summarize(w.take())).toEqual(["resource:1:A"]);
      expect(csdsRows(client)[0]?.version).toBe("2");
    });

    it("sends nothing when one of two watchers leaves, drops the name when the last leaves, closes the stream when all are gone", async () => {
      const { client, server, metrics } = start();
      const cancelA1 = client.watch(testListenerType, "A", recordingWatcher());
      const cancelA2 = client.watch(testListenerType, "A", recordingWatcher());
      const cancelB = client.watch(testListenerType, "B", recordingWatcher());
      const stream = await server.nextStream();
      await stream.nextRequest();
      await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A")] });
      cancelA1();
      await flush();
      expect(stream.requests.length).toBe(2);
      cancelA2();
      cancelA2();
      // Unsubscribed: out of CSDS and metrics at once, before the request goes out.
      expect(csdsRows(client).map((c) => c.name)).toEqual(["B"]);
      expect(metrics.gauges().get("resources{#old,acked}")).toBeUndefined();
      expect(metrics.gauges().get("resources{#old,requested}")).toBe(1);
      const next = await stream.nextRequest();
      expect(next.names).toEqual(["B"]);
      expect(next.removed).toEqual(["A"]);
      expect(metrics.gauges().get("connected{primary:443}")).toBe(1);
      cancelB();
      await flush();
      expect(stream.cancelled).toBe(true);
      expect(client.dumpResources().genericXdsConfigs).toEqual([]);
      // A78 `connected`: no stream, so not connected.
      expect(metrics.gauges().get("connected{primary:443}")).toBe(0);
    });

    it("tracks the nonce (and SotW version) per type on one stream", async () => {
      const { client, server } = start();
      client.watch(testListenerType, "A", recordingWatcher());
      const stream = await server.nextStream();
      await stream.nextRequest();
      await stream.exchange({ typeUrl: LDS, versionInfo: "7", nonce: "n1", resources: [listenerAny("A")] });
      client.watch(testEndpointsType, "E", recordingWatcher());
      expect(req(await stream.nextRequest())).toEqual({
        type: EDS,
        version: "",
        nonce: "",
        names: ["E"],
        nack: false,
        node: false,
      });
    });

    it("names a wrapped resource by its wrapper, not by the name inside", async () => {
      const { client, server } = start();
      const outer = recordingWatcher<TestListener>();
      const inner = recordingWatcher<TestListener>();
      client.watch(testListenerType, "outer", outer);
      client.watch(testListenerType, "inner", inner);
      const stream = await server.nextStream();
      await stream.nextRequest();
      const wrapper = create(ResourceSchema, { name: "outer", version: "1", resource: listenerAny("inner") });
      const ack = await stream.exchange({
        typeUrl: LDS,
        versionInfo: "1",
        nonce: "n1",
        resources: [anyPack(ResourceSchema, wrapper)],
      });
      expect(ack.nack).toBe(false);
      await flush();
      // The value is the inner listener (its own name field says "inner"); it reaches the watcher of "outer" only.
      expect(summarize(outer.take())).toEqual(["resource:1:inner"]);
      expect(inner.take()).toEqual([]);
      expect(csdsRows(client).map((c) => [c.name, c.status])).toEqual([
        ["outer", "ACKED"],
        ["inner", "REQUESTED"],
      ]);
    });
  });

  describe("NACK and validation (A46)", () => {
    it("NACKs an invalid first response with the node ID and tells the watcher", async () => {
      const { client, server } = start();
      const w = recordingWatcher<TestListener>();
      client.watch(testListenerType, "badA", w);
      const stream = await server.nextStream();
      await stream.nextRequest();
      const nack = await stream.exchange({
        typeUrl: LDS,
        versionInfo: "1",
        nonce: "n1",
        resources: [listenerAny("badA")],
      });
      expect(req(nack)).toEqual({ type: LDS, version: "", nonce: "n1", names: ["badA"], nack: true, node: false });
      expect(nack.errorDetail).toEqual({
        code: 3,
        message: `xDS response validation errors: [resource index 0: badA: name: starts with bad] (node ID: ${NODE_ID})`,
      });
      await flush();
      const events = w.take();
      expect(summarize(events)).toEqual(["error:INVALID_ARGUMENT:nacked"]);
      expect(events[0]?.kind === "error" && events[0].error.message).toBe(
        `[INVALID_ARGUMENT] invalid resource badA: name: starts with bad (node ID: ${NODE_ID})`,
      );
      expect(csdsRows(client)).toEqual([
        { name: "badA", status: "NACKED", version: "", hasConfig: false, error: "1|name: starts with bad|time" },
      ]);
    });

    it("keeps a cached resource on a NACK and reports the error as ambient", async () => {
      const { client, server, metrics } = start();
      const w = recordingWatcher<TestListener>();
      client.watch(testListenerType, "A", w);
      const stream = await server.nextStream();
      await stream.nextRequest();
      await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A", "one")] });
      // An invalid A: the test type rejects names starting with "bad", so send one wrapped under the name A.
      const bad = create(ResourceSchema, { name: "A", resource: listenerAny("bad") });
      const nack = await stream.exchange({
        typeUrl: LDS,
        versionInfo: "2",
        nonce: "n2",
        resources: [anyPack(ResourceSchema, bad)],
      });
      expect(req(nack)).toMatchObject({ version: v("1"), nonce: "n2", nack: true });
      await flush();
      expect(summarize(w.take())).toEqual(["resource:1:A", "ambient:INVALID_ARGUMENT:nacked"]);
      expect(csdsRows(client)).toEqual([
        { name: "A", status: "NACKED", version: "1", hasConfig: true, error: "2|name: starts with bad|time" },
      ]);
      expect(metrics.gauges().get("resources{#old,nacked_but_cached}")).toBe(1);
      expect(
        metrics.counter("grpc.xds_client.resource_updates_invalid", { "grpc.xds.resource_type": typeName(LDS) }),
      ).toBe(1);
    });

    it("drops the cached resource on a NACK with fail_on_data_errors", async () => {
      const { client, server, metrics } = start({ serverFeatures: ["fail_on_data_errors"] });
      const w = recordingWatcher<TestListener>();
      client.watch(testListenerType, "A", w);
      const stream = await server.nextStream();
      await stream.nextRequest();
      await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A")] });
      const bad = create(ResourceSchema, { name: "A", resource: listenerAny("bad") });
      await stream.exchange({ typeUrl: LDS, versionInfo: "2", nonce: "n2", resources: [anyPack(ResourceSchema, bad)] });
      await flush();
      expect(summarize(w.take())).toEqual(["resource:1:A", "error:INVALID_ARGUMENT:nacked"]);
      expect(csdsRows(client)[0]).toMatchObject({ status: "NACKED", hasConfig: false });
      expect(metrics.gauges().get("resources{#old,nacked}")).toBe(1);
    });

    it("applies the valid resources of a mixed response and names every bad one in one NACK", async () => {
      const { client, server, metrics } = start();
      const a = recordingWatcher<TestEndpoints>();
      const b = recordingWatcher<TestEndpoints>();
      const c = recordingWatcher<TestEndpoints>();
      client.watch(testEndpointsType, "A", a);
      client.watch(testEndpointsType, "badB", b);
      // C is sent unparseable: nothing names it, so its watcher hears nothing.
      client.watch(testEndpointsType, "C", c);
      const stream = await server.nextStream();
      await stream.nextRequest();
      const emptyAny = { $typeName: "google.protobuf.Any" as const, typeUrl: "", value: new Uint8Array() };
      const badWrapper = {
        $typeName: "google.protobuf.Any" as const,
        typeUrl: "type.googleapis.com/envoy.service.discovery.v3.Resource",
        value: new Uint8Array([0xff, 0xff]),
      };
      const unparseableC = {
        $typeName: "google.protobuf.Any" as const,
        typeUrl: EDS,
        value: new Uint8Array([0x0a, 0xff]),
      };
      const nack = await stream.exchange({
        typeUrl: EDS,
        versionInfo: "1",
        nonce: "n1",
        resources: [endpointsAny("A"), endpointsAny("badB"), unparseableC, emptyAny, badWrapper, listenerAny("wrong")],
      });
      // SotW: the version advances, since one resource was valid.
      expect(req(nack)).toMatchObject({ version: v("1"), nonce: "n1", nack: true });
      const message = nack.errorDetail?.message ?? "";
      for (const index of [1, 2, 3, 4, 5]) expect(message).toContain(`resource index ${index}:`);
      expect(message).not.toContain("resource index 0:");
      expect(message).toContain("resource index 1: badB: cluster_name: starts with bad");
      expect(message).toContain("does not match the response's");
      await flush();
      expect(summarize(a.take())).toEqual(["resource:1:A"]);
      expect(summarize(b.take())).toEqual(["error:INVALID_ARGUMENT:nacked"]);
      expect(c.take()).toEqual([]);
      expect(csdsRows(client).map((r) => [r.name, r.status])).toEqual([
        ["A", "ACKED"],
        ["badB", "NACKED"],
        ["C", "REQUESTED"],
      ]);
      const labels = { "grpc.xds.server": "primary:443", "grpc.xds.resource_type": typeName(EDS) };
      expect(metrics.counter("grpc.xds_client.resource_updates_valid", labels)).toBe(1);
      expect(metrics.counter("grpc.xds_client.resource_updates_invalid", labels)).toBe(5);
    });

    it("does not repeat the same validation error to watchers but NACKs again", async () => {
      const { client, server } = start();
      const w = recordingWatcher<TestEndpoints>();
      client.watch(testEndpointsType, "badA", w);
      const stream = await server.nextStream();
      await stream.nextRequest();
      await stream.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("badA")] });
      const again = await stream.exchange({
        typeUrl: EDS,
        versionInfo: "2",
        nonce: "n2",
        resources: [endpointsAny("badA")],
      });
      expect(again).toMatchObject({ nonce: "n2", nack: true });
      await flush();
      expect(summarize(w.take())).toEqual(["error:INVALID_ARGUMENT:nacked"]);
    });

    it("bounds the NACK detail to 4 KiB, keeps the node ID, and logs the full list", async () => {
      const lines: string[] = [];
      const logger = {
        error: () => {},
        warn: (m: string) => lines.push(m),
        info: () => {},
        debug: () => {},
        trace: () => {},
      };
      const { client, server } = start({ logger });
      client.watch(testEndpointsType, "A", recordingWatcher());
      const stream = await server.nextStream();
      await stream.nextRequest();
      const bad = Array.from({ length: 2_000 }, (_, i) => endpointsAny(`bad-${i}`));
      const nack = await stream.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: bad });
      const message = nack.errorDetail?.message ?? "";
      expect(Buffer.byteLength(message)).toBeLessThanOrEqual(4096);
      expect(message).toMatch(
        /^xDS response validation errors: \[resource index 0: bad-0: cluster_name: starts with bad; /,
      );
      const more = /; … (\d+) more errors\] \(node ID: node-under-test\)$/.exec(message);
      expect(more).not.toBeNull();
      const listed = message.split("; resource index ").length;
      expect(listed + Number(more?.[1])).toBe(2_000);
      const logged = lines.find((l) => l.includes("NACK"));
      expect(logged).toContain("resource index 1999: bad-1999: cluster_name: starts with bad");
    });
  });

  describe("flow control", () => {
    /** A watcher that holds each callback until released. */
    function holdingWatcher() {
      const seen: string[] = [];
      let release: () => void = () => {};
      const hold = (what: string) => {
        seen.push(what);
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      };
      return {
        seen,
        release: () => release(),
        watcher: {
          onResourceChanged: (r: { ok: boolean; version?: string; error?: { code: number } }) =>
            hold(r.ok ? `resource:${r.version}` : `error:${r.error?.code}`),
          onAmbientError: (e: { code: number }) => hold(`ambient:${e.code}`),
        },
      };
    }

    it("holds the next read until every watcher released the previous update", async () => {
      const { client, server } = start();
      const h = holdingWatcher();
      client.watch(testEndpointsType, "A", h.watcher as never);
      const stream = await server.nextStream();
      await stream.nextRequest();
      await stream.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("A", 1)] });
      stream.respond({ typeUrl: EDS, versionInfo: "2", nonce: "n2", resources: [endpointsAny("A", 2)] });
      await flush();
      expect(h.seen).toEqual(["resource:1"]);
      expect(stream.requests.length).toBe(2);
      h.release();
      expect((await stream.nextRequest()).nonce).toBe("n2");
      await flush();
      expect(h.seen).toEqual(["resource:1", "resource:2"]);
    });

    it("holds the next read for an error delivered to a watcher", async () => {
      const { client, server } = start();
      const h = holdingWatcher();
      client.watch(testEndpointsType, "badA", h.watcher as never);
      const stream = await server.nextStream();
      await stream.nextRequest();
      await stream.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("badA")] });
      stream.respond({ typeUrl: EDS, versionInfo: "2", nonce: "n2", resources: [endpointsAny("badA", 2)] });
      await flush();
      expect(h.seen).toEqual(["error:3"]);
      expect(stream.requests.length).toBe(2);
      h.release();
      expect((await stream.nextRequest()).nonce).toBe("n2");
    });

    it("holds the next read for a does-not-exist caused by the server", async () => {
      const { client, server } = start({ serverFeatures: ["fail_on_data_errors"] });
      const h = holdingWatcher();
      client.watch(testListenerType, "A", h.watcher as never);
      const stream = await server.nextStream();
      await stream.nextRequest();
      await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A")] });
      h.release();
      await flush();
      // SotW: an LDS response without A deletes it; delta: an explicit removal.
      stream.respond({ typeUrl: LDS, versionInfo: "2", nonce: "n2", resources: [], removed: ["A"] });
      stream.respond({ typeUrl: LDS, versionInfo: "3", nonce: "n3", resources: [listenerAny("A")] });
      await flush();
      expect(h.seen).toEqual(["resource:1", "error:5"]);
      expect(stream.requests.map((r) => r.nonce)).toEqual(["", "n1", "n2"]);
      expect((await stream.nextRequest()).nonce).toBe("n2");
      h.release();
      expect((await stream.nextRequest()).nonce).toBe("n3");
    });

    it("isolates a throwing watcher from the others", async () => {
      const { client, server } = start();
      const good = recordingWatcher<TestEndpoints>();
      client.watch(testEndpointsType, "A", {
        onResourceChanged() {
          throw new Error("boom");
        },
        onAmbientError() {},
      });
      client.watch(testEndpointsType, "A", good);
      const stream = await server.nextStream();
      await stream.nextRequest();
      await stream.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("A")] });
      await flush();
      expect(summarize(good.take())).toEqual(["resource:1:A"]);
    });

    it("lets a watcher start another watch from inside its callback", async () => {
      const { client, server } = start();
      const inner = recordingWatcher<TestEndpoints>();
      client.watch(testListenerType, "A", {
        onResourceChanged() {
          client.watch(testEndpointsType, "from-callback", inner);
        },
        onAmbientError() {},
      });
      const stream = await server.nextStream();
      await stream.nextRequest();
      await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A")] });
      const edsRequest = await stream.nextRequest();
      expect(req(edsRequest)).toMatchObject({ type: EDS, names: ["from-callback"] });
    });
  });
});

describe("sotw ADS only", () => {
  it("does not decode again a resource whose bytes did not change since the previous response", async () => {
    const { client, server } = setup();
    let decodes = 0;
    const counting: typeof testEndpointsType = {
      ...testEndpointsType,
      decode(any, context) {
        decodes += 1;
        return testEndpointsType.decode(any, context);
      },
    };
    client.watch(counting, "A", recordingWatcher());
    client.watch(counting, "B", recordingWatcher());
    const stream = await server.nextStream();
    await stream.nextRequest();
    const both = (b: number) => [endpointsAny("A"), endpointsAny("B", b)];
    await stream.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: both(1) });
    expect(decodes).toBe(2);
    await stream.exchange({ typeUrl: EDS, versionInfo: "2", nonce: "n2", resources: both(1) });
    expect(decodes).toBe(2);
    await stream.exchange({ typeUrl: EDS, versionInfo: "3", nonce: "n3", resources: both(2) });
    expect(decodes).toBe(3);
    expect(csdsStatuses(client)).toEqual(["ACKED", "ACKED"]);
  });
});
