// withEncodedNames: whatever a SotW request holds, the bytes written with its reused name list encoded once read back
// as the same request (protobuf-es on the server side); short or unfrozen lists go as they are.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { type DiscoveryRequest, DiscoveryRequestSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { withEncodedNames } from "./sotw-request-bytes.js";

const nameArb = fc.oneof(fc.constantFrom("cluster-1", "é", ""), fc.string({ unit: "grapheme", maxLength: 200 }));

const requestArb = fc
  .record({
    names: fc.oneof(fc.array(nameArb, { maxLength: 3 }), fc.array(nameArb, { minLength: 16, maxLength: 40 })),
    versionInfo: fc.constantFrom("", "7"),
    responseNonce: fc.constantFrom("", "n1"),
    node: fc.option(fc.constantFrom("node-a"), { nil: undefined }),
    nack: fc.boolean(),
    locators: fc.array(fc.record({ name: fc.constantFrom("a", "b"), env: fc.constantFrom("prod", "dev") }), {
      maxLength: 2,
    }),
  })
  .map(({ names, versionInfo, responseNonce, node, nack, locators }) =>
    create(DiscoveryRequestSchema, {
      versionInfo,
      responseNonce,
      typeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
      resourceNames: Object.freeze(names) as string[],
      ...(node === undefined ? {} : { node: { id: node } }),
      ...(nack ? { errorDetail: { code: 3, message: "bad" } } : {}),
      resourceLocators: locators.map((l) => ({ name: l.name, dynamicParameters: { env: l.env } })),
    }),
  );

const written = (request: DiscoveryRequest) =>
  fromBinary(DiscoveryRequestSchema, toBinary(DiscoveryRequestSchema, request));

describe("withEncodedNames", () => {
  it("writes bytes that read back as the same request", () => {
    fc.assert(
      fc.property(requestArb, (request) => {
        expect(written(withEncodedNames(request))).toEqual(written(request));
      }),
    );
  });

  it("encodes a frozen list of 16 or more names once, and leaves other requests as they are", () => {
    const names = Object.freeze(Array.from({ length: 20 }, (_, i) => `cluster-${i}`)) as string[];
    const first = withEncodedNames(create(DiscoveryRequestSchema, { resourceNames: names, responseNonce: "1" }));
    const second = withEncodedNames(create(DiscoveryRequestSchema, { resourceNames: names, responseNonce: "2" }));
    expect(first.resourceNames).toEqual([]);
    expect(second.$unknown?.[0]?.data).toBe(first.$unknown?.[0]?.data);
    const short = create(DiscoveryRequestSchema, { resourceNames: Object.freeze(["a"]) as string[] });
    expect(withEncodedNames(short)).toBe(short);
    const unfrozen = create(DiscoveryRequestSchema, { resourceNames: [...names] });
    expect(withEncodedNames(unfrozen)).toBe(unfrozen);
  });
});
