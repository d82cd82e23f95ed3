// A67 (draft) dynamic parameters on the wire and TP2 variants in responses, in both protocols: locators, one cache
// entry per parameter map, the variant each subscription holds (for deletions, removals and errors), ambiguity, the
// A67 switch, and how CSDS and metrics name variant subscriptions.
import { create } from "@bufbuild/protobuf";
import { type Any, anyPack, anyUnpack } from "@bufbuild/protobuf/wkt";
import {
  type DynamicParameterConstraints,
  type Resource,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { describe, expect, it } from "vitest";
import type { Protocol } from "./support/fake-transport.js";
import { csdsRows, setup } from "./support/harness.js";
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

const EDS = testEndpointsType.typeUrl;
const LDS = testListenerType.typeUrl;
const CLA = "envoy.config.endpoint.v3.ClusterLoadAssignment";

function value(key: string, v: string): DynamicParameterConstraints {
  return create(ResourceSchema, {
    resourceName: {
      dynamicParameterConstraints: {
        type: { case: "constraint", value: { key, constraintType: { case: "value", value: v } } },
      },
    },
  }).resourceName!.dynamicParameterConstraints!;
}

function and(...terms: DynamicParameterConstraints[]): DynamicParameterConstraints {
  return create(ResourceSchema, {
    resourceName: { dynamicParameterConstraints: { type: { case: "andConstraints", value: { constraints: terms } } } },
  }).resourceName!.dynamicParameterConstraints!;
}

function wrap(name: string, any: Any, constraints: DynamicParameterConstraints): Any {
  return anyPack(
    ResourceSchema,
    create(ResourceSchema, { resourceName: { name, dynamicParameterConstraints: constraints }, resource: any }),
  );
}

const variant = (name: string, localities: number, c: DynamicParameterConstraints) =>
  wrap(name, endpointsAny(name, localities), c);
const listenerVariant = (name: string, statPrefix: string, c: DynamicParameterConstraints) =>
  wrap(name, listenerAny(name, statPrefix), c);

function localities(events: ReturnType<ReturnType<typeof recordingWatcher<TestEndpoints>>["take"]>): unknown[] {
  return events.map((e) => (e.kind === "resource" ? e.resource.localities : e.kind));
}

describe.each(["sotw", "delta"] as const)("%s ADS", (protocol: Protocol) => {
  function start(extra: Record<string, unknown> = {}, features = {}, serverFeatures: string[] = []) {
    return setup({
      protocol,
      serverFeatures,
      bootstrap: {
        dynamic_parameters: { env: "prod" },
        authorities: { "plain.example": {}, "p.example": { dynamic_parameters: { shard: "7" } } },
        ...extra,
      },
      features,
    });
  }

  describe("dynamic parameters on the wire (A67)", () => {
    it("sends locators for names whose authority has parameters and plain names for the others, in one request", async () => {
      const { client, server } = start();
      client.watch(testEndpointsType, "old-style", recordingWatcher());
      client.watch(testEndpointsType, `xdstp://plain.example/${CLA}/a`, recordingWatcher());
      client.watch(testEndpointsType, `xdstp://p.example/${CLA}/b`, recordingWatcher());
      const stream = await server.nextStream();
      const request = await stream.nextRequest();
      expect(request.added).toEqual([
        "old-style{env=prod}",
        `xdstp://p.example/${CLA}/b{shard=7}`,
        `xdstp://plain.example/${CLA}/a`,
      ]);
      expect(stream.requests.length).toBe(1);
    });

    it("never merges the root map into an authority's", async () => {
      const { client, server } = start();
      client.watch(testEndpointsType, `xdstp://plain.example/${CLA}/a`, recordingWatcher());
      const stream = await server.nextStream();
      const request = await stream.nextRequest();
      expect(request.locators).toEqual([]);
      expect(request.names).toEqual([`xdstp://plain.example/${CLA}/a`]);
    });

    it("with A67 off, sends plain names, ignores per-watch parameters, and names resources by Resource.name", async () => {
      const { client, server, metrics } = start({}, { dynamicParameters: false });
      const w = recordingWatcher<TestEndpoints>();
      const other = recordingWatcher<TestEndpoints>();
      client.watch(testEndpointsType, "svc", w, { dynamicParameters: { env: "test" } });
      client.watch(testEndpointsType, "svc", recordingWatcher(), { dynamicParameters: { env: "prod" } });
      client.watch(testEndpointsType, "other", other);
      const stream = await server.nextStream();
      const request = await stream.nextRequest();
      expect(request.added).toEqual(["other", "svc"]);
      // One subscription for the name, whatever parameters the watches asked for.
      expect(csdsRows(client).map((r) => r.name)).toEqual(["svc", "other"]);
      // A resource whose resource_name says "other" with constraints: with A67 off, Resource.name ("svc") names it.
      const wrapper = create(ResourceSchema, {
        name: "svc",
        resourceName: { name: "other", dynamicParameterConstraints: value("env", "test") },
        resource: endpointsAny("svc", 4),
      });
      const ack = await stream.exchange({
        typeUrl: EDS,
        versionInfo: "1",
        nonce: "n1",
        resources: [anyPack(ResourceSchema, wrapper)],
      });
      expect(ack.nack).toBe(false);
      await flush();
      expect(localities(w.take())).toEqual([4]);
      expect(other.take()).toEqual([]);
      expect(metrics.gauges().get("resources{#old,acked}")).toBe(1);
    });

    it("keeps one cache entry per parameter map and routes each variant by its constraints", async () => {
      const { client, server } = start();
      const prod = recordingWatcher<TestEndpoints>();
      const test = recordingWatcher<TestEndpoints>();
      client.watch(testEndpointsType, "svc", prod, { dynamicParameters: { env: "prod" } });
      client.watch(testEndpointsType, "svc", test, { dynamicParameters: { env: "test" } });
      const stream = await server.nextStream();
      expect((await stream.nextRequest()).locators).toEqual(["svc{env=prod}", "svc{env=test}"]);
      await stream.exchange({
        typeUrl: EDS,
        versionInfo: "1",
        nonce: "n1",
        resources: [variant("svc", 1, value("env", "prod")), variant("svc", 2, value("env", "test"))],
      });
      await flush();
      expect(localities(prod.take())).toEqual([1]);
      expect(localities(test.take())).toEqual([2]);
      // An update to the prod variant does not notify the test subscribers.
      await stream.exchange({
        typeUrl: EDS,
        versionInfo: "2",
        nonce: "n2",
        resources: [variant("svc", 3, value("env", "prod"))],
      });
      await flush();
      expect(summarize(prod.take())).toEqual(["resource:2:svc"]);
      expect(test.take()).toEqual([]);
    });

    it("picks the most specific of several matching variants whatever their order, and counts the ambiguity", async () => {
      const { client, server, metrics } = start();
      const w = recordingWatcher<TestEndpoints>();
      client.watch(testEndpointsType, "svc", w, { dynamicParameters: { env: "prod", version: "v1" } });
      const stream = await server.nextStream();
      await stream.nextRequest();
      const both = and(value("env", "prod"), value("version", "v1"));
      await stream.exchange({
        typeUrl: EDS,
        versionInfo: "1",
        nonce: "n1",
        resources: [variant("svc", 2, both), variant("svc", 1, value("env", "prod"))],
      });
      await stream.exchange({
        typeUrl: EDS,
        versionInfo: "2",
        nonce: "n2",
        resources: [variant("svc", 1, value("env", "prod")), variant("svc", 2, both)],
      });
      await flush();
      // Both responses resolve to the two-key variant; the second is identical and notifies nobody.
      expect(localities(w.take())).toEqual([2]);
      expect([...metrics.counters].filter(([k]) => k.includes("ambiguous"))).toEqual([
        [
          `grpc.xds_client.resource_variants_ambiguous{grpc.target=#server,grpc.xds.resource_type=${typeName(EDS)},grpc.xds.server=primary:443}`,
          2,
        ],
      ]);
    });

    it("NACKs a variant whose constraints are malformed, naming the field", async () => {
      const { client, server } = start();
      client.watch(testEndpointsType, "svc", recordingWatcher(), { dynamicParameters: { env: "prod" } });
      const stream = await server.nextStream();
      await stream.nextRequest();
      const unset = create(ResourceSchema, { resourceName: { dynamicParameterConstraints: {} } }).resourceName!
        .dynamicParameterConstraints!;
      const nack = await stream.exchange({
        typeUrl: EDS,
        versionInfo: "1",
        nonce: "n1",
        resources: [variant("svc", 1, unset)],
      });
      expect(nack.errorDetail?.message).toContain("resource index 0: svc: ");
      expect(nack.errorDetail?.message).toContain("resource_name.dynamic_parameter_constraints");
    });

    it("gives a resource error carrying constraints only to the subscriptions holding that variant", async () => {
      // Steps: {env:prod, version:v2} holds the env=prod&&version=v2 variant, {env:prod} holds env=prod; an error
      // for (svc, env=prod) reaches only the second, though the first's parameters satisfy env=prod too.
      const { client, server } = start();
      const narrow = recordingWatcher<TestEndpoints>();
      const broad = recordingWatcher<TestEndpoints>();
      client.watch(testEndpointsType, "svc", narrow, { dynamicParameters: { env: "prod", version: "v2" } });
      client.watch(testEndpointsType, "svc", broad, { dynamicParameters: { env: "prod" } });
      const stream = await server.nextStream();
      await stream.nextRequest();
      const v2 = and(value("env", "prod"), value("version", "v2"));
      await stream.exchange({
        typeUrl: EDS,
        versionInfo: "1",
        nonce: "n1",
        resources: [variant("svc", 2, v2), variant("svc", 1, value("env", "prod"))],
      });
      await flush();
      expect(localities(narrow.take())).toEqual([2]);
      expect(localities(broad.take())).toEqual([1]);
      await stream.exchange({
        typeUrl: EDS,
        versionInfo: "2",
        nonce: "n2",
        resourceErrors: [
          {
            resourceName: { name: "svc", dynamicParameterConstraints: value("env", "prod") },
            errorDetail: { code: 7, message: "no" },
          },
        ],
      });
      await flush();
      expect(narrow.take()).toEqual([]);
      expect(summarize(broad.take())).toEqual(["ambient:PERMISSION_DENIED:server_error"]);
    });

    it("percent-encodes parameter maps in CSDS names and metric labels, so maps that would read alike do not (scenario 70)", async () => {
      // Each pair would print the same without encoding: `a=1,b=2`, `a=b=c`, `a=%2C`, `a={x}`.
      const { client, metrics } = start();
      const maps = [
        { a: "1,b=2" },
        { a: "1", b: "2" },
        { "a=b": "c" },
        { a: "b=c" },
        { a: "%2C" },
        { a: "," },
        { a: "{x}" },
        { a: "%7Bx%7D" },
      ];
      for (const dynamicParameters of maps) {
        client.watch(testEndpointsType, "svc", recordingWatcher(), { dynamicParameters });
      }
      await flush();
      const names = csdsRows(client).map((r) => r.name);
      expect(names).toEqual([
        "svc{a=1%2Cb%3D2}",
        "svc{a=1,b=2}",
        "svc{a%3Db=c}",
        "svc{a=b%3Dc}",
        "svc{a=%252C}",
        "svc{a=%2C}",
        "svc{a=%7Bx%7D}",
        "svc{a=%257Bx%257D}",
      ]);
      const labels = [...metrics.gaugeSeries().keys()]
        .filter((k) => k.startsWith("grpc.xds_client.resources"))
        .map((k) => /grpc\.xds\.dynamic_parameters=(.*),grpc\.xds\.resource_type/.exec(k)?.[1]);
      expect(labels.sort()).toEqual(names.map((n) => n.slice(4, -1)).sort());
    });

    it("names each variant subscription in CSDS and metrics without collision", async () => {
      const { client, server, metrics } = start();
      client.watch(testEndpointsType, "svc", recordingWatcher(), { dynamicParameters: { env: "prod" } });
      client.watch(testEndpointsType, "svc", recordingWatcher(), { dynamicParameters: { env: "test" } });
      client.watch(testEndpointsType, "svc", recordingWatcher(), { dynamicParameters: {} });
      const stream = await server.nextStream();
      await stream.nextRequest();
      await stream.exchange({
        typeUrl: EDS,
        versionInfo: "1",
        nonce: "n1",
        resources: [variant("svc", 1, value("env", "prod"))],
      });
      expect(csdsRows(client).map((r) => [r.name, r.status])).toEqual([
        ["svc{env=prod}", "ACKED"],
        ["svc{env=test}", "REQUESTED"],
        ["svc", "REQUESTED"],
      ]);
      // The variant held is reported as received: wrapped in a Resource whose resource_name carries its constraints.
      const config = client.dumpResources().genericXdsConfigs[0]?.xdsConfig;
      const wrapper = config ? (anyUnpack(config, ResourceSchema) as Resource | undefined) : undefined;
      expect(wrapper?.resourceName?.name).toBe("svc");
      expect(wrapper?.resourceName?.dynamicParameterConstraints).toEqual(value("env", "prod"));
      expect(wrapper?.resource?.typeUrl).toBe(EDS);
      const series = [...metrics.gaugeSeries()].filter(([k]) => k.startsWith("grpc.xds_client.resources"));
      expect(series).toEqual([
        [
          `grpc.xds_client.resources{grpc.target=#server,grpc.xds.authority=#old,grpc.xds.cache_state=acked,grpc.xds.dynamic_parameters=env=prod,grpc.xds.resource_type=${typeName(EDS)}}`,
          1,
        ],
        [
          `grpc.xds_client.resources{grpc.target=#server,grpc.xds.authority=#old,grpc.xds.cache_state=requested,grpc.xds.dynamic_parameters=env=test,grpc.xds.resource_type=${typeName(EDS)}}`,
          1,
        ],
        [
          `grpc.xds_client.resources{grpc.target=#server,grpc.xds.authority=#old,grpc.xds.cache_state=requested,grpc.xds.resource_type=${typeName(EDS)}}`,
          1,
        ],
      ]);
    });
  });
});

describe("sotw ADS: variants", () => {
  it("deletes a subscription whose variant disappears from the next LDS response while other variants stay", async () => {
    // Steps: {env:prod} and {env:test} subscribe to listener L; both variants arrive; the next response keeps
    // L's prod variant only: the test subscription's variant was omitted, so it is deleted (ambient NOT_FOUND).
    const t = setup({ bootstrap: {} });
    const prod = recordingWatcher<TestListener>();
    const test = recordingWatcher<TestListener>();
    t.client.watch(testListenerType, "L", prod, { dynamicParameters: { env: "prod" } });
    t.client.watch(testListenerType, "L", test, { dynamicParameters: { env: "test" } });
    const stream = await t.server.nextStream();
    await stream.nextRequest();
    await stream.exchange({
      typeUrl: LDS,
      versionInfo: "1",
      nonce: "n1",
      resources: [listenerVariant("L", "p", value("env", "prod")), listenerVariant("L", "t", value("env", "test"))],
    });
    await stream.exchange({
      typeUrl: LDS,
      versionInfo: "2",
      nonce: "n2",
      resources: [listenerVariant("L", "p2", value("env", "prod"))],
    });
    await flush();
    expect(summarize(prod.take())).toEqual(["resource:1:L", "resource:2:L"]);
    expect(summarize(test.take())).toEqual(["resource:1:L", "ambient:NOT_FOUND:does_not_exist"]);
    expect(csdsRows(t.client).map((r) => [r.name, r.status])).toEqual([
      ["L{env=prod}", "ACKED"],
      ["L{env=test}", "DOES_NOT_EXIST"],
    ]);
  });
});

describe("delta ADS: variants", () => {
  it("removes only the subscriptions holding the removed variant, not every one its constraints match", async () => {
    // Steps: {env:prod, version:v2} holds env=prod&&version=v2, {env:prod} holds env=prod; the server removes
    // (svc, env=prod): only the second hears NOT_FOUND.
    const t = setup({ protocol: "delta", bootstrap: {} });
    const narrow = recordingWatcher<TestEndpoints>();
    const broad = recordingWatcher<TestEndpoints>();
    t.client.watch(testEndpointsType, "svc", narrow, { dynamicParameters: { env: "prod", version: "v2" } });
    t.client.watch(testEndpointsType, "svc", broad, { dynamicParameters: { env: "prod" } });
    const stream = await t.server.nextStream();
    await stream.nextRequest();
    const v2 = and(value("env", "prod"), value("version", "v2"));
    await stream.exchange({
      typeUrl: EDS,
      versionInfo: "1",
      nonce: "n1",
      resources: [variant("svc", 2, v2), variant("svc", 1, value("env", "prod"))],
    });
    const ack = await stream.exchange({
      typeUrl: EDS,
      versionInfo: "2",
      nonce: "n2",
      removedNames: [{ name: "svc", dynamicParameterConstraints: value("env", "prod") }],
    });
    expect(ack.nack).toBe(false);
    await flush();
    expect(localities(narrow.take())).toEqual([2]);
    expect(summarize(broad.take())).toEqual(["resource:1:svc", "ambient:NOT_FOUND:does_not_exist"]);
    expect(csdsRows(t.client).map((r) => [r.name, r.status])).toEqual([
      ["svc{env=prod,version=v2}", "ACKED"],
      ["svc{env=prod}", "DOES_NOT_EXIST"],
    ]);
  });

  it("removes an unconstrained resource with removed_resources and leaves the variants alone", async () => {
    const t = setup({ protocol: "delta", bootstrap: {} });
    const plain = recordingWatcher<TestEndpoints>();
    const prod = recordingWatcher<TestEndpoints>();
    t.client.watch(testEndpointsType, "svc", plain);
    t.client.watch(testEndpointsType, "svc", prod, { dynamicParameters: { env: "prod" } });
    const stream = await t.server.nextStream();
    await stream.nextRequest();
    await stream.exchange({
      typeUrl: EDS,
      versionInfo: "1",
      nonce: "n1",
      resources: [variant("svc", 1, value("env", "prod"))],
    });
    await stream.exchange({ typeUrl: EDS, versionInfo: "2", nonce: "n2", removed: ["svc"] });
    await flush();
    expect(summarize(plain.take())).toEqual(["error:NOT_FOUND:does_not_exist"]);
    expect(localities(prod.take())).toEqual([1]);
  });

  it("keeps a name's only subscription on its constrained variant when a response carries only the unconstrained one", async () => {
    // A delta response carries what changed: the held variant env=prod stands, and is more specific than the
    // unconstrained one the response brings.
    const t = setup({ protocol: "delta", bootstrap: {} });
    const prod = recordingWatcher<TestEndpoints>();
    t.client.watch(testEndpointsType, "svc", prod, { dynamicParameters: { env: "prod" } });
    const stream = await t.server.nextStream();
    await stream.nextRequest();
    await stream.exchange({
      typeUrl: EDS,
      versionInfo: "1",
      nonce: "n1",
      resources: [variant("svc", 2, value("env", "prod"))],
    });
    const ack = await stream.exchange({
      typeUrl: EDS,
      versionInfo: "2",
      nonce: "n2",
      resources: [endpointsAny("svc", 3)],
    });
    expect(ack.nack).toBe(false);
    await flush();
    expect(localities(prod.take())).toEqual([2]);
    expect(csdsRows(t.client).map((r) => [r.name, r.status])).toEqual([["svc{env=prod}", "ACKED"]]);
  });
});
