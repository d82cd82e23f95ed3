import { create, equals, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import {
  DeltaDiscoveryResponseSchema,
  DiscoveryResponseSchema,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { expect, test } from "vitest";
import { withPreEncodedField } from "./pre-encoded.js";

const anys = [1, 2, 3].map((i) => anyPack(ClusterSchema, create(ClusterSchema, { name: `cluster-${i}` })));

test("a SotW response with pre-encoded resources decodes to the same message", () => {
  const logical = create(DiscoveryResponseSchema, {
    versionInfo: "7",
    typeUrl: "t",
    nonce: "3",
    resources: anys,
    resourceErrors: [{ resourceName: { name: "x" }, errorDetail: { code: 5 } }],
  });
  const wire = withPreEncodedField({ ...logical, resources: [] }, 2, anys);
  expect(wire.resources).toEqual([]);
  const decoded = fromBinary(DiscoveryResponseSchema, toBinary(DiscoveryResponseSchema, wire), {
    readUnknownFields: false,
  });
  expect(equals(DiscoveryResponseSchema, decoded, logical)).toBe(true);
  // The logical message is untouched.
  expect(logical.$unknown).toBeUndefined();
});

test("a delta response with pre-encoded resources decodes to the same message", () => {
  const resources = anys.map((resource, i) => create(ResourceSchema, { name: `cluster-${i}`, version: "1", resource }));
  const logical = create(DeltaDiscoveryResponseSchema, {
    typeUrl: "t",
    nonce: "1",
    resources,
    removedResources: ["gone"],
  });
  const wire = withPreEncodedField({ ...logical, resources: [] }, 2, resources);
  const decoded = fromBinary(DeltaDiscoveryResponseSchema, toBinary(DeltaDiscoveryResponseSchema, wire));
  expect(equals(DeltaDiscoveryResponseSchema, decoded, logical)).toBe(true);
});
