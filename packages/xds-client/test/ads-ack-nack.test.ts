// Subscription, ACK and NACK on the SotW ADS stream (conformance 1-16, A46), checked against exact requests, watcher
// events, CSDS and metrics after each step. Fine-grained: an in-memory stream; the same flows over real HTTP/2 are in
// ads-over-http2.test.ts.

import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { ClientResourceStatus } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import type { DiscoveryRequest } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
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

function req(r: DiscoveryRequest) {
  return {
    version: r.versionInfo,
    nonce: r.responseNonce,
    names: [...r.resourceNames].sort(),
    nack: r.errorDetail !== undefined,
    node: r.node !== undefined,
    type: r.typeUrl,
  };
}

const start = setup;

function csds(client: ReturnType<typeof setup>["client"]) {
  return client.dumpResources().genericXdsConfigs.map((c) => ({
    name: c.name,
    status: ClientResourceStatus[c.clientStatus],
    version: c.versionInfo,
    hasConfig: c.xdsConfig !== undefined,
    error: c.errorState ? { version: c.errorState.versionInfo, details: c.errorState.details } : undefined,
  }));
}

describe("subscribing and ACKing", () => {
  it("dumps an empty config list, with the node, before any watch", async () => {
    const { client, server } = start();
    const dump = client.dumpResources();
    expect(dump.genericXdsConfigs).toEqual([]);
    expect(dump.node?.id).toBe(NODE_ID);
    expect(dump.clientScope).toBe("#server");
    expect(server.streams.length).toBe(0);
  });

  it("opens a stream whose first request carries the node, the type, empty version and nonce, and the name", async () => {
    const { client, server } = start();
    const w = recordingWatcher<TestListener>();
    client.watch(testListenerType, "A", w);
    const stream = await server.nextStream();
    const first = await stream.nextRequest();
    expect(req(first)).toEqual({ version: "", nonce: "", names: ["A"], nack: false, node: true, type: LDS });
    expect(first.node?.id).toBe(NODE_ID);
    expect(first.node?.clientFeatures).toContain("xds.config.resource-in-sotw");
    expect(csds(client)).toEqual([{ name: "A", status: "REQUESTED", version: "", hasConfig: false, error: undefined }]);
  });

  it("delivers a resource, ACKs with its version and nonce, and shows ACKED in CSDS and metrics", async () => {
    const { client, server, metrics } = start();
    const w = recordingWatcher<TestListener>();
    client.watch(testListenerType, "A", w);
    const stream = await server.nextStream();
    await stream.nextRequest();
    const ack = await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A")] });
    expect(req(ack)).toEqual({ version: "1", nonce: "n1", names: ["A"], nack: false, node: false, type: LDS });
    await flush();
    expect(summarize(w.take())).toEqual(["resource:1:A"]);
    const [entry] = client.dumpResources().genericXdsConfigs;
    expect(entry?.clientStatus).toBe(ClientResourceStatus.ACKED);
    expect(entry?.versionInfo).toBe("1");
    expect(entry?.lastUpdated).toBeDefined();
    expect(metrics.counter("grpc.xds_client.resource_updates_valid", { "grpc.xds.resource_type": LDS })).toBe(1);
    expect(metrics.gauges().get("resources{#old,acked}")).toBe(1);
    expect(metrics.gauges().get("connected{primary:443}")).toBe(1);
  });

  it("adds a second name in one request that keeps the last version and nonce", async () => {
    const { client, server } = start();
    client.watch(testListenerType, "A", recordingWatcher());
    const stream = await server.nextStream();
    await stream.nextRequest();
    await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A")] });
    client.watch(testListenerType, "B", recordingWatcher());
    expect(req(await stream.nextRequest())).toEqual({
      version: "1",
      nonce: "n1",
      names: ["A", "B"],
      nack: false,
      node: false,
      type: LDS,
    });
  });

  it("coalesces every watch made in one tick into one request per type", async () => {
    const { client, server } = start();
    for (let i = 0; i < 100; i++) client.watch(testEndpointsType, `e${i}`, recordingWatcher());
    client.watch(testListenerType, "A", recordingWatcher());
    const stream = await server.nextStream();
    await flush();
    expect(stream.requests.length).toBe(2);
    expect(stream.requests.find((r) => r.typeUrl === EDS)?.resourceNames.length).toBe(100);
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
    expect(csds(client).map((c) => c.status)).toEqual(["ACKED", "ACKED"]);
  });

  it("notifies nobody for an identical resource but still ACKs", async () => {
    const { client, server } = start();
    const w = recordingWatcher<TestListener>();
    client.watch(testListenerType, "A", w);
    const stream = await server.nextStream();
    await stream.nextRequest();
    await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A")] });
    expect(
      req(await stream.exchange({ typeUrl: LDS, versionInfo: "2", nonce: "n2", resources: [listenerAny("A")] })),
    ).toMatchObject({ version: "2", nonce: "n2", nack: false });
    await flush();
    expect(summarize(w.take())).toEqual(["resource:1:A"]);
    expect(csds(client)[0]?.version).toBe("2");
  });

  it("does not decode again a resource whose bytes did not change since the previous response", async () => {
    const { client, server } = start();
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
    await stream.exchange({
      typeUrl: EDS,
      versionInfo: "1",
      nonce: "n1",
      resources: [endpointsAny("A"), endpointsAny("B")],
    });
    expect(decodes).toBe(2);
    await stream.exchange({
      typeUrl: EDS,
      versionInfo: "2",
      nonce: "n2",
      resources: [endpointsAny("A"), endpointsAny("B")],
    });
    expect(decodes).toBe(2);
    await stream.exchange({
      typeUrl: EDS,
      versionInfo: "3",
      nonce: "n3",
      resources: [endpointsAny("A"), endpointsAny("B", 2)],
    });
    expect(decodes).toBe(3);
  });

  it("sends no request when one of two watchers leaves, drops the name when the last leaves, closes the stream when all are gone", async () => {
    const { client, server } = start();
    const cancelA1 = client.watch(testListenerType, "A", recordingWatcher());
    const cancelA2 = client.watch(testListenerType, "A", recordingWatcher());
    const cancelB = client.watch(testListenerType, "B", recordingWatcher());
    const stream = await server.nextStream();
    await stream.nextRequest();
    cancelA1();
    await flush();
    expect(stream.requests.length).toBe(1);
    cancelA2();
    cancelA2();
    expect(req(await stream.nextRequest()).names).toEqual(["B"]);
    expect(csds(client).map((c) => c.name)).toEqual(["B"]);
    cancelB();
    await flush();
    expect(stream.cancelled).toBe(true);
  });

  it("tracks version and nonce per type on one stream", async () => {
    const { client, server } = start();
    client.watch(testListenerType, "A", recordingWatcher());
    const stream = await server.nextStream();
    await stream.nextRequest();
    await stream.exchange({ typeUrl: LDS, versionInfo: "7", nonce: "n1", resources: [listenerAny("A")] });
    client.watch(testEndpointsType, "E", recordingWatcher());
    expect(req(await stream.nextRequest())).toEqual({
      version: "",
      nonce: "",
      names: ["E"],
      nack: false,
      node: false,
      type: EDS,
    });
  });

  it("unwraps resources sent inside envoy.service.discovery.v3.Resource, the wrapper's name winning", async () => {
    const { client, server } = start();
    const w = recordingWatcher<TestListener>();
    client.watch(testListenerType, "wrapped", w);
    const stream = await server.nextStream();
    await stream.nextRequest();
    const wrapper = create(ResourceSchema, { name: "wrapped", version: "1", resource: listenerAny("wrapped") });
    expect(
      req(
        await stream.exchange({
          typeUrl: LDS,
          versionInfo: "1",
          nonce: "n1",
          resources: [anyPack(ResourceSchema, wrapper)],
        }),
      ).nack,
    ).toBe(false);
    await flush();
    expect(summarize(w.take())).toEqual(["resource:1:wrapped"]);
  });
});

describe("NACK and validation (A46)", () => {
  it("NACKs an invalid first response with an empty version and the node ID, and tells the watcher", async () => {
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
    expect(req(nack)).toEqual({ version: "", nonce: "n1", names: ["badA"], nack: true, node: false, type: LDS });
    expect(nack.errorDetail?.code).toBe(3);
    expect(nack.errorDetail?.message).toBe(
      `xDS response validation errors: [resource index 0: badA: name: starts with bad] (node ID: ${NODE_ID})`,
    );
    await flush();
    const events = w.take();
    expect(summarize(events)).toEqual(["error:INVALID_ARGUMENT:nacked"]);
    expect(events[0]?.kind === "error" && events[0].error.message).toContain(`(node ID: ${NODE_ID})`);
    expect(csds(client)).toEqual([
      {
        name: "badA",
        status: "NACKED",
        version: "",
        hasConfig: false,
        error: { version: "1", details: "name: starts with bad" },
      },
    ]);
  });

  it("keeps a cached resource on a NACK and reports the error as ambient", async () => {
    const { client, server, metrics } = start();
    const w = recordingWatcher<TestListener>();
    client.watch(testListenerType, "A", w);
    const stream = await server.nextStream();
    await stream.nextRequest();
    await stream.exchange({ typeUrl: LDS, versionInfo: "1", nonce: "n1", resources: [listenerAny("A", "one")] });
    // An invalid A: the test type rejects names starting with "bad", so send it wrapped under the name A.
    const bad = create(ResourceSchema, { name: "A", resource: listenerAny("bad") });
    expect(
      req(
        await stream.exchange({
          typeUrl: LDS,
          versionInfo: "2",
          nonce: "n2",
          resources: [anyPack(ResourceSchema, bad)],
        }),
      ),
    ).toMatchObject({ version: "1", nonce: "n2", nack: true });
    await flush();
    expect(summarize(w.take())).toEqual(["resource:1:A", "ambient:INVALID_ARGUMENT:nacked"]);
    expect(csds(client)).toEqual([
      {
        name: "A",
        status: "NACKED",
        version: "1",
        hasConfig: true,
        error: { version: "2", details: "name: starts with bad" },
      },
    ]);
    expect(metrics.gauges().get("resources{#old,nacked_but_cached}")).toBe(1);
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
    expect(csds(client)[0]).toMatchObject({ status: "NACKED", hasConfig: false });
    expect(metrics.gauges().get("resources{#old,nacked}")).toBe(1);
  });

  it("applies the valid resources of a mixed response and names every bad one in one NACK", async () => {
    const { client, server, metrics } = start();
    const a = recordingWatcher<TestEndpoints>();
    const b = recordingWatcher<TestEndpoints>();
    client.watch(testEndpointsType, "A", a);
    client.watch(testEndpointsType, "badB", b);
    const stream = await server.nextStream();
    await stream.nextRequest();
    const emptyAny = { $typeName: "google.protobuf.Any" as const, typeUrl: "", value: new Uint8Array() };
    const badWrapper = {
      $typeName: "google.protobuf.Any" as const,
      typeUrl: "type.googleapis.com/envoy.service.discovery.v3.Resource",
      value: new Uint8Array([0xff, 0xff]),
    };
    const unparseable = {
      $typeName: "google.protobuf.Any" as const,
      typeUrl: EDS,
      value: new Uint8Array([0x0a, 0xff]),
    };
    const nack = await stream.exchange({
      typeUrl: EDS,
      versionInfo: "1",
      nonce: "n1",
      resources: [
        endpointsAny("A"),
        endpointsAny("badB"),
        unparseable,
        emptyAny,
        badWrapper,
        listenerAny("wrong-type"),
      ],
    });
    // The version advances: one resource was valid.
    expect(req(nack)).toMatchObject({ version: "1", nonce: "n1", nack: true });
    const message = nack.errorDetail?.message ?? "";
    for (const index of [1, 2, 3, 4, 5]) expect(message).toContain(`resource index ${index}:`);
    expect(message).not.toContain("resource index 0:");
    expect(message).toContain("resource index 1: badB: cluster_name: starts with bad");
    expect(message).toContain("does not match the response's");
    await flush();
    expect(summarize(a.take())).toEqual(["resource:1:A"]);
    expect(summarize(b.take())).toEqual(["error:INVALID_ARGUMENT:nacked"]);
    expect(metrics.counter("grpc.xds_client.resource_updates_valid")).toBe(1);
    expect(metrics.counter("grpc.xds_client.resource_updates_invalid")).toBe(5);
  });

  it("does not repeat the same validation error to watchers but NACKs again", async () => {
    const { client, server } = start();
    const w = recordingWatcher<TestEndpoints>();
    client.watch(testEndpointsType, "badA", w);
    const stream = await server.nextStream();
    await stream.nextRequest();
    await stream.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("badA")] });
    expect(
      req(await stream.exchange({ typeUrl: EDS, versionInfo: "2", nonce: "n2", resources: [endpointsAny("badA")] })),
    ).toMatchObject({ nonce: "n2", nack: true });
    await flush();
    expect(summarize(w.take())).toEqual(["error:INVALID_ARGUMENT:nacked"]);
  });
});

describe("flow control", () => {
  it("holds the next read until every watcher released the previous update", async () => {
    const { client, server } = start();
    let release: () => void = () => {};
    const seen: string[] = [];
    client.watch(testEndpointsType, "A", {
      onResourceChanged(result) {
        if (result.ok) seen.push(result.version);
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      },
      onAmbientError() {},
    });
    const stream = await server.nextStream();
    await stream.nextRequest();
    await stream.exchange({ typeUrl: EDS, versionInfo: "1", nonce: "n1", resources: [endpointsAny("A", 1)] });
    stream.respond({ typeUrl: EDS, versionInfo: "2", nonce: "n2", resources: [endpointsAny("A", 2)] });
    await flush();
    expect(seen).toEqual(["1"]);
    release();
    await stream.nextRequest();
    await flush();
    expect(seen).toEqual(["1", "2"]);
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
