// The shared body of a response plus a stream's nonce must be exactly what protobuf-es writes for the whole message:
// checked over arbitrary SotW and delta responses, byte for byte, and by decoding the bytes back.
import { create, equals, fromBinary, toBinary } from "@bufbuild/protobuf";
import { type Any, AnySchema } from "@bufbuild/protobuf/wkt";
import {
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
  type Resource,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import fc from "fast-check";
import { expect, test } from "vitest";
import {
  encodeBody,
  type PlainResourceParts,
  type ResponseResource,
  type WireMessage,
  withNonce,
} from "./encoded-response.js";
import { frameHeader } from "./grpc-frames.js";

const text = fc.string({ unit: "grapheme", maxLength: 12 });
// Values past 127 bytes too, so a resource's length takes more than one varint byte.
const any = fc
  .record({
    typeUrl: text,
    value: fc.oneof(fc.uint8Array({ maxLength: 24 }), fc.uint8Array({ minLength: 100, maxLength: 20_000 })),
  })
  .map((init) => create(AnySchema, init));
const resourceError = fc.record({
  resourceName: fc.record({ name: text }),
  errorDetail: fc.record({ code: fc.integer({ min: 0, max: 16 }), message: text }),
});
/** Nonces as this server makes them (decimal counters, written by a fast path) and any others. */
const nonce = fc.oneof(fc.nat().map(String), fc.bigInt({ min: 0n, max: 10n ** 130n }).map(String), text);
const controlPlane = fc.option(fc.record({ identifier: text }), { nil: undefined });

const sotwResponse: fc.Arbitrary<DiscoveryResponse> = fc
  .record({
    versionInfo: text,
    resources: fc.array(any, { maxLength: 5 }),
    canary: fc.boolean(),
    typeUrl: text,
    nonce: text,
    controlPlane,
    resourceErrors: fc.array(resourceError, { maxLength: 3 }),
  })
  .map(({ controlPlane: cp, ...init }) =>
    create(DiscoveryResponseSchema, { ...init, ...(cp ? { controlPlane: cp } : {}) }),
  );

const deltaResponse: fc.Arbitrary<DeltaDiscoveryResponse> = fc
  .record({
    systemVersionInfo: text,
    resources: fc.array(
      // Plain ones (name, version, resource: the shape written by hand) and others (written by protobuf-es).
      fc.oneof(
        fc.record({ name: text, version: text, resource: any }),
        fc.record({ name: text, version: text, aliases: fc.array(text, { maxLength: 2 }), resource: any }),
        fc.record({ name: text, version: text }),
        fc.record({ version: text, resource: any, cacheControl: fc.record({ doNotCache: fc.boolean() }) }),
      ),
      { maxLength: 5 },
    ),
    typeUrl: text,
    removedResources: fc.array(text, { maxLength: 3 }),
    removedResourceNames: fc.array(fc.record({ name: text }), { maxLength: 2 }),
    nonce: text,
    controlPlane,
    resourceErrors: fc.array(resourceError, { maxLength: 3 }),
  })
  .map(({ controlPlane: cp, ...init }) =>
    create(DeltaDiscoveryResponseSchema, { ...init, ...(cp ? { controlPlane: cp } : {}) }),
  );

function joined(parts: readonly Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

/** The message's bytes; a message also built framed must be the gRPC frame header then those bytes. */
function bytesOf(wire: WireMessage): Uint8Array {
  const bytes = joined(wire.parts);
  if (wire.framed) expect(new Uint8Array(wire.framed)).toEqual(joined([frameHeader(bytes.length), bytes]));
  return bytes;
}

// The properties that build responses of up to five 20 KB resources are CPU-bound: about 1 s each alone, up to 7 s
// with the machine busy; they get 60 s.

test("a SotW body around a nonce is byte for byte toBinary of the whole response", () => {
  fc.assert(
    fc.property(sotwResponse, nonce, (message, nonce) => {
      const whole = { ...message, nonce };
      const wire = withNonce(encodeBody(DiscoveryResponseSchema, message), nonce);
      const bytes = bytesOf(wire);
      expect(wire.size).toBe(bytes.length);
      expect(bytes).toEqual(toBinary(DiscoveryResponseSchema, whole));
      expect(equals(DiscoveryResponseSchema, fromBinary(DiscoveryResponseSchema, bytes), whole)).toBe(true);
    }),
  );
}, 60_000);

test("a delta body around a nonce is byte for byte toBinary of the whole response", () => {
  fc.assert(
    fc.property(deltaResponse, nonce, (message, nonce) => {
      const whole = { ...message, nonce };
      const wire = withNonce(encodeBody(DeltaDiscoveryResponseSchema, message), nonce);
      const bytes = bytesOf(wire);
      expect(wire.size).toBe(bytes.length);
      expect(bytes).toEqual(toBinary(DeltaDiscoveryResponseSchema, whole));
      expect(equals(DeltaDiscoveryResponseSchema, fromBinary(DeltaDiscoveryResponseSchema, bytes), whole)).toBe(true);
    }),
  );
}, 60_000);

test("a small response is built in one buffer behind its gRPC frame header, written as is", () => {
  const message = create(DiscoveryResponseSchema, { versionInfo: "1", typeUrl: "t", resources: [] });
  const wire = withNonce(encodeBody(DiscoveryResponseSchema, message), "7");
  expect(wire.framed?.length).toBe(5 + wire.size);
  expect(bytesOf(wire)).toEqual(toBinary(DiscoveryResponseSchema, { ...message, nonce: "7" }));
});

test("one body serves every nonce: only the nonce field differs", () => {
  fc.assert(
    fc.property(sotwResponse, fc.uniqueArray(nonce, { minLength: 2, maxLength: 4 }), (message, nonces) => {
      const body = encodeBody(DiscoveryResponseSchema, message);
      for (const nonce of nonces) {
        expect(bytesOf(withNonce(body, nonce))).toEqual(toBinary(DiscoveryResponseSchema, { ...message, nonce }));
      }
    }),
  );
}, 60_000);

test("strings of any UTF-16 code units, lone surrogates included, are written as protobuf-es writes them", () => {
  // protobuf-es writes a lone surrogate as U+FFFD, so such a string does not decode back: bytes only.
  const units = fc.string({
    unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
    maxLength: 12,
  });
  const anyOfUnits = fc
    .record({ typeUrl: units, value: fc.uint8Array({ maxLength: 8 }) })
    .map((init) => create(AnySchema, init));
  fc.assert(
    fc.property(
      fc.array(anyOfUnits, { maxLength: 4 }),
      fc.array(fc.record({ name: units, version: units, resource: anyOfUnits }), { maxLength: 4 }),
      units,
      (anys, resources, nonce) => {
        const sotw = create(DiscoveryResponseSchema, { versionInfo: nonce, typeUrl: nonce, resources: anys });
        expect(bytesOf(withNonce(encodeBody(DiscoveryResponseSchema, sotw), nonce))).toEqual(
          toBinary(DiscoveryResponseSchema, { ...sotw, nonce }),
        );
        const delta = create(DeltaDiscoveryResponseSchema, { typeUrl: nonce, resources });
        expect(bytesOf(withNonce(encodeBody(DeltaDiscoveryResponseSchema, delta), nonce))).toEqual(
          toBinary(DeltaDiscoveryResponseSchema, { ...delta, nonce }),
        );
      },
    ),
  );
});

test("delta resources given by their parts are written as the Resource messages they stand for", () => {
  // An Any carrying unknown fields (one decoded from another server, say) is left to protobuf-es.
  const withUnknown = any.map((a) => {
    const bytes = toBinary(AnySchema, a);
    return fromBinary(AnySchema, Uint8Array.from([...bytes, 0xf8, 0x06, 0x01])); // field 111, varint 1
  });
  const partsOf: fc.Arbitrary<PlainResourceParts> = fc.record({
    name: text,
    // Counters as this server issues them, and numbers it never does (written by protobuf-es).
    version: fc.oneof(
      fc.nat(),
      fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      fc.oneof(fc.integer({ max: -1 }), fc.double({ noNaN: true }), fc.constant(2 ** 60)),
    ),
    any: fc.oneof({ weight: 4, arbitrary: any }, { weight: 1, arbitrary: withUnknown }),
  });
  const message = (resource: ResponseResource) =>
    "$typeName" in resource
      ? resource
      : create(ResourceSchema, { name: resource.name, version: String(resource.version), resource: resource.any });
  fc.assert(
    fc.property(
      deltaResponse,
      fc.array(fc.oneof(partsOf, partsOf.map(message)), { maxLength: 6 }),
      nonce,
      (envelope, resources, nonce) => {
        const whole = { ...envelope, resources: resources.map(message) as Resource[], nonce };
        const wire = withNonce(encodeBody(DeltaDiscoveryResponseSchema, envelope, resources), nonce);
        expect(bytesOf(wire)).toEqual(toBinary(DeltaDiscoveryResponseSchema, whole));
        expect(wire.size).toBe(toBinary(DeltaDiscoveryResponseSchema, whole).length);
      },
    ),
  );
}, 60_000);

test("a SotW response's resources cannot be given as the parts of a delta Resource", () => {
  const parts: PlainResourceParts = { name: "a", version: 1, any: create(AnySchema, {}) as Any };
  expect(() => encodeBody(DiscoveryResponseSchema, create(DiscoveryResponseSchema), [parts])).toThrow(
    /google.protobuf.Any resources cannot be given by the parts of a Resource/,
  );
});
