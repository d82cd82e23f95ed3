// The default transport reads a delta response as DeltaResponseBytes (each resource the bytes of its Resource) and the
// client reads each one with `readResource` (without protobuf-es when it is encoded as servers encode one); before,
// protobuf-es read the envelope with the Resources in it. The twin of sotw-response-bytes.test.ts. Property, for any
// response bytes (valid responses, then the same with byte-level mutations):
//   - where the new reading succeeds, the old one did, and gave the same response, field for field, Resource for
//     Resource (keys in the same order, Any for Any);
//   - where the old reading fails, the new one fails too (the stream fails with INTERNAL "parse binary: …" either way);
//   - the new reading fails where the old one succeeded only when protobuf-es read a Resource past its own end and
//     went on reading the envelope out of step with its fields (docs/limits.md): counted, from mutated bytes only.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
  type Resource,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { DeltaResponseBytesSchema } from "@xdskit/protos/xdskit/client/v1/delta_response_pb";
import fc from "fast-check";
import { expect, it } from "vitest";
import { errorMessage } from "../../src/shared/xds-error.js";
import { expectTypeUrls, UnreadableResponseError } from "../../src/wire/any-reader.js";
import { readPlainResource, readResource } from "../../src/wire/delta-resource.js";
import { resourceEntryArb } from "./delta-resource-arbitrary.js";
import { applyMutations, INTERESTING_BYTES, mutationsArb } from "./mutations.js";
import { RESOURCE_KINDS } from "./resource-arbitraries.js";
import { fuzzParameters, fuzzTimeoutMs } from "./settings.js";

const kind = RESOURCE_KINDS.find((k) => k.label === "CDS")!;
const typeUrl = kind.type.typeUrl;
const expected = expectTypeUrls(typeUrl);
const resourceBytesArb = resourceEntryArb(kind);

const responseArb = fc
  .record({
    version: fc.constantFrom("", "1"),
    nonce: fc.constantFrom("", "n"),
    resources: fc.array(resourceBytesArb, { maxLength: 4 }),
    removed: fc.array(fc.constantFrom("a", "b"), { maxLength: 1 }),
    errors: fc.array(fc.constantFrom("a", "b"), { maxLength: 1 }),
    trailing: fc.array(fc.constantFrom(...INTERESTING_BYTES), { maxLength: 1 }),
  })
  .map(({ version, nonce, resources, removed, errors, trailing }) => {
    const envelope = create(DeltaResponseBytesSchema, {
      systemVersionInfo: version,
      typeUrl,
      nonce,
      resources,
      removedResources: removed,
      removedResourceNames: removed.map((name) => ({ name })),
      resourceErrors: errors.map((name) => ({ resourceName: { name }, errorDetail: { code: 5, message: "gone" } })),
    });
    const bytes = toBinary(DeltaResponseBytesSchema, envelope);
    return trailing.length === 0 ? bytes : new Uint8Array([...bytes, ...trailing[0]!]);
  });

const bytesArb = fc.oneof(
  responseArb,
  fc.tuple(responseArb, mutationsArb).map(([bytes, mutations]) => applyMutations(bytes, mutations)),
);

type Read =
  | { readonly ok: true; readonly response: DeltaDiscoveryResponse }
  | { readonly ok: false; readonly message: string };

/** What the transport handed the client before: the envelope read by protobuf-es, Resources and all. */
function oldRead(bytes: Uint8Array): Read {
  try {
    return { ok: true, response: fromBinary(DeltaDiscoveryResponseSchema, bytes) };
  } catch (error) {
    return { ok: false, message: `parse binary: ${errorMessage(error)}` };
  }
}

/** What it hands now, and what the client reads of it: the envelope with bytes, then each Resource. */
function newRead(bytes: Uint8Array): Read | { readonly ok: false; readonly inResource: string } {
  let envelope: ReturnType<typeof fromBinary<typeof DeltaResponseBytesSchema>>;
  try {
    envelope = fromBinary(DeltaResponseBytesSchema, bytes);
  } catch (error) {
    return { ok: false, message: `parse binary: ${errorMessage(error)}` };
  }
  let resources: Resource[];
  try {
    resources = envelope.resources.map((resource) => readResource(resource, expected));
  } catch (error) {
    expect(error).toBeInstanceOf(UnreadableResponseError);
    return { ok: false, inResource: (error as UnreadableResponseError).rawMessage };
  }
  const { $typeName: _, $unknown: unknown, resources: __, ...fields } = envelope;
  const response = create(DeltaDiscoveryResponseSchema, { ...fields, resources });
  if (unknown !== undefined) response.$unknown = unknown;
  return { ok: true, response };
}

it(
  "a delta response read with its resources as bytes reads as it did with them as Resources",
  () => {
    const seen = { same: 0, bothFailed: 0, overrun: 0 };
    fc.assert(
      fc.property(bytesArb, (bytes) => {
        const before = oldRead(bytes);
        const now = newRead(bytes);
        if (now.ok) {
          expect(before).toEqual(now);
          if (before.ok) {
            for (const [i, r] of before.response.resources.entries()) {
              expect(now.response.resources[i]).toStrictEqual(r);
            }
          }
          seen.same += 1;
        } else if (!before.ok) {
          seen.bothFailed += 1;
        } else {
          if ("inResource" in now) expect(now.inResource).toBe("parse binary: premature EOF");
          seen.overrun += 1;
        }
      }),
      fuzzParameters(2000),
    );
    expect(seen.same).toBeGreaterThan(0);
    expect(seen.bothFailed).toBeGreaterThan(0);
    if (process.env.DELTA_BYTES_COUNTS) console.log(seen);
  },
  fuzzTimeoutMs,
);

it("readResource reads an entry as protobuf-es reads the Resource, directly when it is encoded as servers encode one", () => {
  const entryArb = fc.oneof(
    resourceBytesArb,
    fc.tuple(resourceBytesArb, mutationsArb).map(([bytes, mutations]) => applyMutations(bytes, mutations)),
  );
  const seen = { read: 0, plain: 0, failed: 0 };
  fc.assert(
    fc.property(entryArb, (bytes) => {
      let decoded: Resource;
      try {
        decoded = fromBinary(ResourceSchema, bytes, { recursionLimit: 99 });
      } catch (error) {
        expect(() => readResource(bytes, expected)).toThrow(new UnreadableResponseError(error).message);
        seen.failed += 1;
        return;
      }
      const read = readResource(bytes, expected);
      if (readPlainResource(bytes, expected) !== undefined) seen.plain += 1;
      expect(read).toStrictEqual(decoded);
      expect(Object.keys(read)).toEqual(Object.keys(decoded));
      if (read.resource !== undefined) expect(Object.keys(read.resource)).toEqual(Object.keys(decoded.resource!));
      seen.read += 1;
    }),
    fuzzParameters(2000),
  );
  // Both readings came up: the one without protobuf-es, and protobuf-es's for the other encodings.
  expect(seen.plain).toBeGreaterThan(0);
  expect(seen.read).toBeGreaterThan(seen.plain);
  expect(seen.failed).toBeGreaterThan(0);
});
