// Each built-in resource type's fast path (the generated wire views, src/gen) against its slow path (protobuf-es
// `fromBinary` for the resource and every payload it unpacks, then the same validation): on messages built over the
// whole schema, on what a control plane sends, on byte mutations of both and on concatenations (proto merge), the
// two give the same result: the same failure to parse, the same NACK text and name, or the same update, whose `raw`
// is the message `fromBinary` reads.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { ClusterLoadAssignmentSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { DecodeResult } from "../../src/index.js";
import { setReferenceDecoding } from "../../src/resources/view-runtime.js";
import { context } from "../resources/context.js";
import { claArb } from "./cla-arbitrary.js";
import { encodedMessageArb } from "./message-arbitrary.js";
import { applyMutations, mutationsArb } from "./mutations.js";
import { RESOURCE_KINDS, type ResourceKind } from "./resource-arbitraries.js";
import { fuzzParameters, fuzzTimeoutMs } from "./settings.js";

afterEach(() => setReferenceDecoding(false));

function decode(kind: ResourceKind, bytes: Uint8Array, reference: boolean): DecodeResult<unknown> {
  setReferenceDecoding(reference);
  try {
    return kind.type.decode({ $typeName: "google.protobuf.Any", typeUrl: kind.type.typeUrl, value: bytes }, context);
  } finally {
    setReferenceDecoding(false);
  }
}

type Outcome = "unparsable" | "invalid" | "valid";

/** Asserts that the fast path treats `bytes` as the slow path does; returns what the slow path made of them. */
function check(kind: ResourceKind, bytes: Uint8Array): Outcome {
  const slow = decode(kind, bytes, true);
  const fast = decode(kind, bytes, false);
  expect(fast).toEqual(slow);
  if (!slow.ok) return slow.name === undefined ? "unparsable" : "invalid";
  expect((fast as { value: { raw: unknown } }).value.raw).toEqual(fromBinary(kind.schema, bytes));
  return "valid";
}

/** What a control plane sends (the builders, varied), and messages over the whole schema. */
function inputs(kind: ResourceKind): fc.Arbitrary<Uint8Array> {
  const sent =
    kind.label === "EDS"
      ? fc.oneof(
          kind.bytes("a"),
          claArb.map((init) => toBinary(ClusterLoadAssignmentSchema, create(ClusterLoadAssignmentSchema, init))),
        )
      : kind.bytes("a");
  return fc.oneof(sent, encodedMessageArb(kind.schema));
}

describe.each(RESOURCE_KINDS.map((kind) => [kind.label, kind] as const))("%s fast path = slow path", (_label, kind) => {
  it(
    "valid and mutated encodings",
    () => {
      const seen = { unparsable: 0, invalid: 0, valid: 0 };
      fc.assert(
        fc.property(inputs(kind), fc.option(mutationsArb, { nil: undefined }), (bytes, mutations) => {
          seen[check(kind, mutations === undefined ? bytes : applyMutations(bytes, mutations))]++;
        }),
        fuzzParameters(300),
      );
      expect(seen.unparsable).toBeGreaterThan(0);
      expect(seen.invalid).toBeGreaterThan(0);
      expect(seen.valid).toBeGreaterThan(0);
    },
    fuzzTimeoutMs,
  );

  it(
    "concatenations of two encodings (proto merge: repeated fields append, singular messages merge)",
    () => {
      fc.assert(
        fc.property(inputs(kind), inputs(kind), fc.option(mutationsArb, { nil: undefined }), (a, b, mutations) => {
          const joined = new Uint8Array([...a, ...b]);
          check(kind, mutations === undefined ? joined : applyMutations(joined, mutations));
        }),
        fuzzParameters(100),
      );
    },
    fuzzTimeoutMs,
  );
});
