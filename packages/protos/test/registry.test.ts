import { create, fromBinary, fromJson, toBinary, toJson } from "@bufbuild/protobuf";
import { AnySchema, anyPack, anyUnpack } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { ClientResourceStatus } from "../src/gen/envoy/admin/v3/config_dump_shared_pb.js";
import { ClusterSchema } from "../src/gen/envoy/config/cluster/v3/cluster_pb.js";
import {
  DeltaDiscoveryResponseSchema,
  DiscoveryResponseSchema,
  DynamicParameterConstraintsSchema,
  ResourceSchema,
} from "../src/gen/envoy/service/discovery/v3/discovery_pb.js";
import { DeltaResponseBytesSchema } from "../src/gen/xdskit/client/v1/delta_response_pb.js";
import { SotwResponseBytesSchema } from "../src/gen/xdskit/client/v1/sotw_response_pb.js";
import { allFiles, typeNameOfUrl, typeUrlOf, xdsRegistry } from "../src/index.js";

describe("xdsRegistry", () => {
  it("holds every message of every generated file", () => {
    let count = 0;
    for (const file of allFiles) {
      const visit = (messages: typeof file.messages) => {
        for (const message of messages) {
          expect(xdsRegistry.getMessage(message.typeName)).toBe(message);
          count += 1;
          visit(message.nestedMessages);
        }
      };
      visit(file.messages);
    }
    expect(count).toBeGreaterThan(100);
  });

  it("unpacks an Any by its type URL", () => {
    const cluster = create(ClusterSchema, { name: "backend", lrsReportEndpointMetrics: ["cpu_utilization"] });
    const any = anyPack(ClusterSchema, cluster);
    expect(any.typeUrl).toBe("type.googleapis.com/envoy.config.cluster.v3.Cluster");
    const back = anyUnpack(any, xdsRegistry);
    expect(back?.$typeName).toBe("envoy.config.cluster.v3.Cluster");
    expect(back).toEqual(cluster);
  });

  it("writes and reads JSON for responses that carry Any", () => {
    const response = create(DiscoveryResponseSchema, {
      versionInfo: "1",
      typeUrl: typeUrlOf(ClusterSchema),
      resources: [anyPack(ResourceSchema, create(ResourceSchema, { name: "a", version: "1" }))],
      resourceErrors: [{ resourceName: { name: "b" }, errorDetail: { code: 5, message: "gone" } }],
    });
    const json = toJson(DiscoveryResponseSchema, response, { registry: xdsRegistry });
    expect(json).toMatchObject({ resourceErrors: [{ resourceName: { name: "b" }, errorDetail: { code: 5 } }] });
    const back = fromJson(DiscoveryResponseSchema, json, { registry: xdsRegistry });
    expect(toBinary(DiscoveryResponseSchema, back)).toEqual(toBinary(DiscoveryResponseSchema, response));
  });
});

describe("wire facts", () => {
  it("encodes resource_errors as field 7 of DiscoveryResponse", () => {
    const bytes = toBinary(DiscoveryResponseSchema, create(DiscoveryResponseSchema, { resourceErrors: [{}] }));
    // tag = (7 << 3) | 2 (length-delimited) = 0x3a, then a zero length
    expect([...bytes]).toEqual([0x3a, 0x00]);
  });

  it("reads a DiscoveryResponse as SotwResponseBytes, each resource the bytes of its Any, and back", () => {
    const resources = [
      anyPack(ClusterSchema, create(ClusterSchema, { name: "a" })),
      anyPack(ResourceSchema, create(ResourceSchema, { name: "b", version: "2" })),
      create(AnySchema, { typeUrl: "", value: new Uint8Array(0) }),
    ];
    const response = create(DiscoveryResponseSchema, {
      versionInfo: "7",
      resources,
      canary: true,
      typeUrl: typeUrlOf(ClusterSchema),
      nonce: "n",
      controlPlane: { identifier: "cp" },
      resourceErrors: [{ resourceName: { name: "c" }, errorDetail: { code: 5, message: "gone" } }],
    });
    const bytes = toBinary(DiscoveryResponseSchema, response);
    const read = fromBinary(SotwResponseBytesSchema, bytes);
    expect(read.resources).toEqual(resources.map((any) => toBinary(AnySchema, any)));
    // Every other field as the DiscoveryResponse has it.
    expect({ ...read, $typeName: "", resources: [] }).toEqual({ ...response, $typeName: "", resources: [] });
    // The same bytes either way: written as SotwResponseBytes, they read as the DiscoveryResponse.
    expect(toBinary(SotwResponseBytesSchema, read)).toEqual(bytes);
    expect(fromBinary(DiscoveryResponseSchema, toBinary(SotwResponseBytesSchema, read))).toEqual(response);
  });

  it("reads a DeltaDiscoveryResponse as DeltaResponseBytes, each resource the bytes of its Resource, and back", () => {
    const resources = [
      create(ResourceSchema, { name: "a", version: "1", resource: anyPack(ClusterSchema, create(ClusterSchema)) }),
      create(ResourceSchema, { resourceName: { name: "b" }, aliases: ["x"], cacheControl: { doNotCache: true } }),
      create(ResourceSchema),
    ];
    const response = create(DeltaDiscoveryResponseSchema, {
      systemVersionInfo: "7",
      resources,
      typeUrl: typeUrlOf(ClusterSchema),
      removedResources: ["c"],
      removedResourceNames: [{ name: "d" }],
      nonce: "n",
      controlPlane: { identifier: "cp" },
      resourceErrors: [{ resourceName: { name: "e" }, errorDetail: { code: 5, message: "gone" } }],
    });
    const bytes = toBinary(DeltaDiscoveryResponseSchema, response);
    const read = fromBinary(DeltaResponseBytesSchema, bytes);
    expect(read.resources).toEqual(resources.map((resource) => toBinary(ResourceSchema, resource)));
    expect({ ...read, $typeName: "", resources: [] }).toEqual({ ...response, $typeName: "", resources: [] });
    expect(toBinary(DeltaResponseBytesSchema, read)).toEqual(bytes);
    expect(fromBinary(DeltaDiscoveryResponseSchema, toBinary(DeltaResponseBytesSchema, read))).toEqual(response);
  });

  it("keeps the A88 cache states", () => {
    expect(ClientResourceStatus.RECEIVED_ERROR).toBe(5);
    expect(ClientResourceStatus.TIMEOUT).toBe(6);
  });

  it("round-trips nested dynamic parameter constraints", () => {
    const constraints = create(DynamicParameterConstraintsSchema, {
      type: {
        case: "andConstraints",
        value: {
          constraints: [
            { type: { case: "constraint", value: { key: "env", constraintType: { case: "value", value: "prod" } } } },
            {
              type: {
                case: "notConstraints",
                value: {
                  type: { case: "constraint", value: { key: "canary", constraintType: { case: "exists", value: {} } } },
                },
              },
            },
          ],
        },
      },
    });
    const back = fromBinary(
      DynamicParameterConstraintsSchema,
      toBinary(DynamicParameterConstraintsSchema, constraints),
    );
    expect(back).toEqual(constraints);
  });
});

describe("type URL helpers", () => {
  it("builds and splits type URLs", () => {
    expect(typeUrlOf(ClusterSchema)).toBe("type.googleapis.com/envoy.config.cluster.v3.Cluster");
    expect(typeNameOfUrl("type.googleapis.com/envoy.config.cluster.v3.Cluster")).toBe(
      "envoy.config.cluster.v3.Cluster",
    );
    expect(typeNameOfUrl("envoy.config.cluster.v3.Cluster")).toBe("envoy.config.cluster.v3.Cluster");
  });
});
