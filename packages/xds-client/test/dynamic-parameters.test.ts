// A67 (draft) dynamic parameters on the wire and TP2 variants in responses (conformance 65, 66, 68).
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import {
  type DynamicParameterConstraints,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { describe, expect, it } from "vitest";
import { setup } from "./support/harness.js";
import { flush, recordingWatcher, summarize } from "./support/recorder.js";
import { endpointsAny, type TestEndpoints, testEndpointsType } from "./support/test-types.js";

const EDS = testEndpointsType.typeUrl;
const CLA = "envoy.config.endpoint.v3.ClusterLoadAssignment";

function start(extra: Record<string, unknown> = {}, features = {}) {
  return setup({
    bootstrap: {
      dynamic_parameters: { env: "prod" },
      authorities: { "plain.example": {}, "p.example": { dynamic_parameters: { shard: "7" } } },
      ...extra,
    },
    features,
  });
}

function value(key: string, v: string): DynamicParameterConstraints {
  return create(ResourceSchema, {
    resourceName: {
      dynamicParameterConstraints: {
        type: { case: "constraint", value: { key, constraintType: { case: "value", value: v } } },
      },
    },
  }).resourceName!.dynamicParameterConstraints!;
}

function variant(name: string, localities: number, constraints: DynamicParameterConstraints) {
  return anyPack(
    ResourceSchema,
    create(ResourceSchema, {
      resourceName: { name, dynamicParameterConstraints: constraints },
      resource: endpointsAny(name, localities),
    }),
  );
}

describe("dynamic parameters on the wire (A67)", () => {
  it("sends resource_locators for names whose authority has parameters and resource_names for the others, in one request", async () => {
    const { client, server } = start();
    client.watch(testEndpointsType, "old-style", recordingWatcher());
    client.watch(testEndpointsType, `xdstp://plain.example/${CLA}/a`, recordingWatcher());
    client.watch(testEndpointsType, `xdstp://p.example/${CLA}/b`, recordingWatcher());
    const stream = await server.nextStream();
    const request = await stream.nextRequest();
    expect(request.resourceNames).toEqual([`xdstp://plain.example/${CLA}/a`]);
    expect(request.resourceLocators.map((l) => [l.name, { ...l.dynamicParameters }]).sort()).toEqual([
      ["old-style", { env: "prod" }],
      [`xdstp://p.example/${CLA}/b`, { shard: "7" }],
    ]);
  });

  it("never merges the root map into an authority's", async () => {
    const { client, server } = start();
    client.watch(testEndpointsType, `xdstp://plain.example/${CLA}/a`, recordingWatcher());
    const stream = await server.nextStream();
    const request = await stream.nextRequest();
    expect(request.resourceLocators).toEqual([]);
  });

  it("sends only resource_names when A67 is off", async () => {
    const { client, server } = start({}, { dynamicParameters: false });
    client.watch(testEndpointsType, "old-style", recordingWatcher());
    const stream = await server.nextStream();
    const request = await stream.nextRequest();
    expect(request.resourceNames).toEqual(["old-style"]);
    expect(request.resourceLocators).toEqual([]);
  });

  it("keeps one cache entry per parameter map and routes each variant by its constraints", async () => {
    const { client, server } = start();
    const prod = recordingWatcher<TestEndpoints>();
    const test = recordingWatcher<TestEndpoints>();
    client.watch(testEndpointsType, "svc", prod, { dynamicParameters: { env: "prod" } });
    client.watch(testEndpointsType, "svc", test, { dynamicParameters: { env: "test" } });
    const stream = await server.nextStream();
    const request = await stream.nextRequest();
    expect(request.resourceLocators.map((l) => l.dynamicParameters.env).sort()).toEqual(["prod", "test"]);
    await stream.exchange({
      typeUrl: EDS,
      versionInfo: "1",
      nonce: "n1",
      resources: [variant("svc", 1, value("env", "prod")), variant("svc", 2, value("env", "test"))],
    });
    await flush();
    expect(prod.take().map((e) => e.kind === "resource" && e.resource.localities)).toEqual([1]);
    expect(test.take().map((e) => e.kind === "resource" && e.resource.localities)).toEqual([2]);
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
    expect(client.dumpResources().genericXdsConfigs.length).toBe(2);
  });

  it("picks the most specific of several matching variants, whatever their order", async () => {
    const { client, server } = start();
    const w = recordingWatcher<TestEndpoints>();
    client.watch(testEndpointsType, "svc", w, { dynamicParameters: { env: "prod", version: "v1" } });
    const stream = await server.nextStream();
    await stream.nextRequest();
    const both = create(ResourceSchema, {
      resourceName: {
        dynamicParameterConstraints: {
          type: { case: "andConstraints", value: { constraints: [value("env", "prod"), value("version", "v1")] } },
        },
      },
    }).resourceName!.dynamicParameterConstraints!;
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
    expect(w.take().map((e) => e.kind === "resource" && e.resource.localities)).toEqual([2]);
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
});
