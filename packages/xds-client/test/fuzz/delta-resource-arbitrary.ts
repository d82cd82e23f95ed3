// Delta resources as servers might send them, for the properties that compare the client's plain readings of delta
// resources with protobuf-es's (delta-response-bytes.test.ts, delta-entries.test.ts).
import { create, toBinary } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import { type Resource, ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import fc from "fast-check";
import type { ResourceKind } from "./resource-arbitraries.js";

/**
 * Names and versions: plain ones (one of them the name `kind.bytes("a")` gives its resource; some of equal lengths),
 * and some that are not.
 */
const text = fc.constantFrom(
  "",
  "a",
  "b",
  "cluster-1",
  "v2",
  "v3",
  "é",
  "xdstp://auth/envoy.config.cluster.v3.Cluster/c",
);

/**
 * A Resource of `kind` as a server might send it: name, version and payload (the plain encoding, or with non-ASCII
 * text, an empty or foreign payload), or with the fields the plain reading leaves to protobuf-es (aliases,
 * resource_name, ttl, cache_control, metadata).
 */
function resourceArb(kind: ResourceKind): fc.Arbitrary<Resource> {
  const typeUrl = kind.type.typeUrl;
  return fc
    .record({
      name: text,
      version: text,
      payload: fc.oneof(
        kind.bytes("a").map((value) => create(AnySchema, { typeUrl, value })),
        kind.bytes("b").map((value) => create(AnySchema, { typeUrl: "type.googleapis.com/x.Y", value })),
        fc.constant(create(AnySchema, { typeUrl, value: new Uint8Array(0) })),
        fc.constant(undefined),
      ),
      extra: fc.constantFrom("none", "none", "none", "aliases", "resourceName", "ttl", "cacheControl", "metadata"),
    })
    .map(({ name, version, payload, extra }) => {
      return create(ResourceSchema, {
        name,
        version,
        resource: payload,
        ...(extra === "aliases" ? { aliases: ["x"] } : {}),
        ...(extra === "resourceName" ? { resourceName: { name } } : {}),
        ...(extra === "ttl" ? { ttl: { seconds: 5n } } : {}),
        ...(extra === "cacheControl" ? { cacheControl: { doNotCache: true } } : {}),
        ...(extra === "metadata" ? { metadata: { filterMetadata: {} } } : {}),
      });
    });
}

/**
 * One Resource's bytes: as protobuf-es writes it, or with its fields in another order, a field twice, or an unknown
 * one.
 */
export function resourceEntryArb(kind: ResourceKind): fc.Arbitrary<Uint8Array> {
  return fc
    .record({
      resource: resourceArb(kind),
      layout: fc.constantFrom("plain", "plain", "reversed", "nameTwice", "unknown"),
    })
    .map(({ resource, layout }) => {
      const bytes = toBinary(ResourceSchema, resource);
      if (layout === "reversed") {
        const fields = [
          toBinary(ResourceSchema, create(ResourceSchema, { name: resource.name })),
          toBinary(ResourceSchema, create(ResourceSchema, { resource: resource.resource })),
          toBinary(ResourceSchema, create(ResourceSchema, { version: resource.version })),
        ];
        return new Uint8Array(fields.flatMap((f) => [...f]));
      }
      if (layout === "nameTwice") return new Uint8Array([...bytes, 0x1a, 0x01, 0x7a]);
      if (layout === "unknown") return new Uint8Array([...bytes, 0x58, 0x01]);
      return bytes;
    });
}
