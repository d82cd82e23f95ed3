// A wrapped resource (a variant, one not to be cached, or any resource when wrapping is asked for) is written by hand
// from its parts: checked against the slow path, the `Resource` message `resourceFor` builds encoded by protobuf-es,
// over arbitrary entries, in SotW (the Any `anyFor` makes) and in delta (a response body of `deltaWireResource`s).
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { type Any, AnySchema, anyPack } from "@bufbuild/protobuf/wkt";
import { and, canonicalize, type Expr, exists, not, or, value } from "@xdskit/constraint-matcher";
import { DeltaDiscoveryResponseSchema, ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import fc from "fast-check";
import { expect, test } from "vitest";
import type { ResourceEntry } from "../resources/entry.js";
import { variantRef } from "../resources/variant-group.js";
import { encodeBody, encodeResourceParts, withNonce } from "./encoded-response.js";
import { anyFor, deltaWireResource, resourceFor, wrappedParts } from "./prepared-response.js";

const text = fc.string({ unit: "grapheme", maxLength: 10 });
const plainAny = fc
  .record({
    typeUrl: text,
    value: fc.oneof(fc.uint8Array({ maxLength: 24 }), fc.uint8Array({ minLength: 100, maxLength: 400 })),
  })
  .map((init) => create(AnySchema, init));
// An Any carrying an unknown field (one decoded from another server, say) is left to protobuf-es.
const anyWithUnknown = plainAny.map((a) =>
  fromBinary(AnySchema, Uint8Array.from([...toBinary(AnySchema, a), 0xf8, 0x06, 0x01])),
);
const key = fc.constantFrom("a", "b", "shard", "env");
const leaf = fc.oneof(
  fc.tuple(key, text).map(([k, v]) => value(k, v)),
  key.map((k) => exists(k)),
);
const { expr } = fc.letrec<{ expr: Expr }>((tie) => ({
  expr: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.array(tie("expr"), { minLength: 2, maxLength: 3 }).map((cs) => and(cs)),
    fc.array(tie("expr"), { minLength: 2, maxLength: 3 }).map((cs) => or(cs)),
    tie("expr").map((c) => not(c)),
  ),
}));

const entry: fc.Arbitrary<ResourceEntry> = fc
  .record({
    name: text,
    // Counters as the store issues them, and numbers it never does (those go to protobuf-es).
    version: fc.oneof({ weight: 5, arbitrary: fc.nat() }, fc.integer({ max: -1 }), fc.double({ noNaN: true })),
    constraints: fc.option(expr, { nil: undefined }),
    any: fc.oneof({ weight: 4, arbitrary: plainAny }, { weight: 1, arbitrary: anyWithUnknown }),
    doNotCache: fc.boolean(),
    wrap: fc.option(fc.boolean(), { nil: undefined }),
  })
  .map(({ name, version, constraints, any, doNotCache, wrap }) => ({
    kind: "resource",
    typeUrl: "type.googleapis.com/test.Resource",
    name,
    version,
    variant: constraints === undefined ? undefined : variantRef(name, canonicalize(constraints)),
    allowOverlap: false,
    schema: undefined,
    any: any as Any,
    wrap,
    doNotCache,
  }));

test("a SotW response's wrapped resource is the Any protobuf-es packs of the Resource message", () => {
  fc.assert(
    fc.property(entry, fc.boolean(), (e, wrapResources) => {
      const any = anyFor(e, wrapResources);
      if (!(e.variant !== undefined || e.doNotCache || (e.wrap ?? wrapResources))) {
        expect(any).toBe(e.any);
        return;
      }
      const slow = anyPack(ResourceSchema, resourceFor(e));
      expect(any.typeUrl).toBe(slow.typeUrl);
      expect(new Uint8Array(any.value)).toEqual(slow.value);
      expect(anyFor(e, wrapResources)).toBe(any);
    }),
  );
});

test("a wrapped resource's parts are written by hand exactly when protobuf-es would write the same bytes", () => {
  fc.assert(
    fc.property(entry, (e) => {
      const parts = wrappedParts(e);
      expect(wrappedParts(e)).toBe(parts);
      const bytes = encodeResourceParts(parts);
      const handWritable = Number.isSafeInteger(e.version) && e.version >= 0 && e.any.$unknown === undefined;
      expect(bytes !== undefined).toBe(handWritable);
      if (bytes) expect(new Uint8Array(bytes)).toEqual(toBinary(ResourceSchema, resourceFor(e)));
    }),
  );
});

test("a delta response of wrapped and plain resources is byte for byte toBinary of their Resource messages", () => {
  fc.assert(
    fc.property(fc.array(entry, { maxLength: 5 }), text, (entries, nonce) => {
      const envelope = create(DeltaDiscoveryResponseSchema, { systemVersionInfo: "3", typeUrl: "t" });
      const wire = withNonce(encodeBody(DeltaDiscoveryResponseSchema, envelope, entries.map(deltaWireResource)), nonce);
      const whole = { ...envelope, resources: entries.map(resourceFor), nonce };
      expect(new Uint8Array(Buffer.concat(wire.parts))).toEqual(toBinary(DeltaDiscoveryResponseSchema, whole));
    }),
  );
});
