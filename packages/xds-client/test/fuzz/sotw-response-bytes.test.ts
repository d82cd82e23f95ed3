// The default transport reads a SotW response as SotwResponseBytes (each resource the bytes of its Any) and the client
// reads each resource it does not already hold with `readAny`; before, protobuf-es read the envelope with the Anys in
// it. Property, for any response bytes (valid responses, then the same with byte-level mutations: truncated resources,
// invalid UTF-8 in a type URL, unknown fields, bad tags, changed lengths):
//   - where the new reading succeeds, the old one did, and gave the same response, field for field and Any for Any;
//   - where the old reading fails, the new one fails too (the stream fails with INTERNAL "parse binary: …" either
//     way; the text may name another problem, as the envelope is now read before the Anys in it);
//   - the new reading fails where the old one succeeded only when protobuf-es read an Any past its own end (a length
//     inside it larger than the Any) and went on reading the envelope from there, out of step with its fields: such a
//     response is now refused. The test counts these cases; they come up only from mutated bytes.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { type Any, AnySchema } from "@bufbuild/protobuf/wkt";
import {
  type DiscoveryResponse,
  DiscoveryResponseSchema,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { SotwResponseBytesSchema } from "@xdskit/protos/xdskit/client/v1/sotw_response_pb";
import fc from "fast-check";
import { expect, it } from "vitest";
import { errorMessage } from "../../src/shared/xds-error.js";
import { expectTypeUrls, readAny, readAnyIn, UnreadableResponseError } from "../../src/wire/any-reader.js";
import { RESOURCE_WRAPPER_TYPE_URL } from "../../src/wire/resource-unwrap.js";
import { applyMutations, INTERESTING_BYTES, mutationsArb } from "./mutations.js";
import { RESOURCE_KINDS } from "./resource-arbitraries.js";
import { fuzzParameters, fuzzTimeoutMs } from "./settings.js";

const kind = RESOURCE_KINDS.find((k) => k.label === "CDS")!;
const typeUrl = kind.type.typeUrl;
const expected = expectTypeUrls(typeUrl, RESOURCE_WRAPPER_TYPE_URL);

/** An Any as a server might send it: the resource, wrapped in a Resource, with unknown fields, or odd type URLs. */
const anyArb: fc.Arbitrary<Any> = fc.oneof(
  kind.bytes("a").map((value) => create(AnySchema, { typeUrl, value })),
  kind.bytes("b").map((value) =>
    create(AnySchema, {
      typeUrl: "type.googleapis.com/envoy.service.discovery.v3.Resource",
      value: toBinary(ResourceSchema, create(ResourceSchema, { name: "b", resource: { typeUrl, value } })),
    }),
  ),
  fc
    .record({ value: kind.bytes("c"), url: fc.constantFrom(typeUrl, "", "type.googleapis.com/é", "x/y") })
    .map(({ value, url }) => create(AnySchema, { typeUrl: url, value })),
);

const responseArb = fc
  .record({
    version: fc.constantFrom("", "1", "v2"),
    nonce: fc.constantFrom("", "n"),
    resources: fc.array(anyArb, { maxLength: 4 }),
    errors: fc.array(fc.constantFrom("a", "b"), { maxLength: 1 }),
    // Unknown fields of an Any, written after its value.
    trailing: fc.array(fc.constantFrom(...INTERESTING_BYTES), { maxLength: 1 }),
  })
  .map(({ version, nonce, resources, errors, trailing }) => {
    const response = create(DiscoveryResponseSchema, {
      versionInfo: version,
      typeUrl,
      nonce,
      resources,
      resourceErrors: errors.map((name) => ({ resourceName: { name }, errorDetail: { code: 5, message: "gone" } })),
    });
    const bytes = toBinary(DiscoveryResponseSchema, response);
    return trailing.length === 0 ? bytes : new Uint8Array([...bytes, ...trailing[0]!]);
  });

const bytesArb = fc.oneof(
  responseArb,
  fc.tuple(responseArb, mutationsArb).map(([bytes, mutations]) => applyMutations(bytes, mutations)),
);

type Read =
  | { readonly ok: true; readonly response: DiscoveryResponse }
  | { readonly ok: false; readonly message: string };

/** What the transport handed the client before: the envelope read by protobuf-es, Anys and all. */
function oldRead(bytes: Uint8Array): Read {
  try {
    return { ok: true, response: fromBinary(DiscoveryResponseSchema, bytes) };
  } catch (error) {
    return { ok: false, message: `parse binary: ${errorMessage(error)}` };
  }
}

/** What it hands now, and what the client reads of it: the envelope with bytes, then each resource's Any. */
function newRead(bytes: Uint8Array): Read | { readonly ok: false; readonly inResource: string } {
  let envelope: ReturnType<typeof fromBinary<typeof SotwResponseBytesSchema>>;
  try {
    envelope = fromBinary(SotwResponseBytesSchema, bytes);
  } catch (error) {
    return { ok: false, message: `parse binary: ${errorMessage(error)}` };
  }
  let resources: Any[];
  try {
    resources = envelope.resources.map((resource) => readAny(resource, expected));
  } catch (error) {
    expect(error).toBeInstanceOf(UnreadableResponseError);
    return { ok: false, inResource: (error as UnreadableResponseError).rawMessage };
  }
  const { $typeName: _, $unknown: unknown, resources: __, ...fields } = envelope;
  const response = create(DiscoveryResponseSchema, { ...fields, resources });
  if (unknown !== undefined) response.$unknown = unknown;
  return { ok: true, response };
}

it(
  "a SotW response read with its resources as bytes reads as it did with them as Anys",
  () => {
    const seen = { same: 0, bothFailed: 0, overrun: 0 };
    fc.assert(
      fc.property(bytesArb, (bytes) => {
        const before = oldRead(bytes);
        const now = newRead(bytes);
        if (now.ok) {
          expect(before).toEqual(now);
          seen.same += 1;
        } else if (!before.ok) {
          seen.bothFailed += 1;
        } else {
          // An overrun: the Any that protobuf-es read past its end does not read on its own, or the envelope, read in
          // step, does not either.
          if ("inResource" in now) expect(now.inResource).toBe("parse binary: premature EOF");
          seen.overrun += 1;
        }
      }),
      fuzzParameters(2000),
    );
    // The cases that matter all came up.
    expect(seen.same).toBeGreaterThan(0);
    expect(seen.bothFailed).toBeGreaterThan(0);
    if (process.env.SOTW_BYTES_COUNTS) console.log(seen);
  },
  fuzzTimeoutMs,
);

it("readAny reads an entry as protobuf-es reads the Any, directly when it is encoded as servers encode one", () => {
  const entryArb = fc.oneof(
    anyArb.map((any) => toBinary(AnySchema, any)),
    fc
      .tuple(
        anyArb.map((any) => toBinary(AnySchema, any)),
        mutationsArb,
      )
      .map(([bytes, mutations]) => applyMutations(bytes, mutations)),
  );
  const seen = { read: 0, failed: 0 };
  fc.assert(
    fc.property(entryArb, (bytes) => {
      let decoded: Any;
      // The same entry inside a larger message, as the transport hands it (a range of the response).
      const inside = new Uint8Array([0x12, ...bytes, 0x0a]);
      const fromInside = () => readAnyIn(inside, 1, 1 + bytes.length, expected);
      try {
        decoded = fromBinary(AnySchema, bytes, { recursionLimit: 99 });
      } catch (error) {
        const message = new UnreadableResponseError(error).message;
        expect(() => readAny(bytes, expected)).toThrow(message);
        expect(fromInside).toThrow(message);
        seen.failed += 1;
        return;
      }
      const read = readAny(bytes, expected);
      expect(read).toStrictEqual(decoded);
      expect(Object.keys(read)).toEqual(Object.keys(decoded));
      expect(fromInside()).toStrictEqual(decoded);
      seen.read += 1;
    }),
    fuzzParameters(1000),
  );
  expect(seen.read).toBeGreaterThan(0);
  expect(seen.failed).toBeGreaterThan(0);
});
