// Every resource type's `decode` on mutated encodings: it never throws, its result is one of the two shapes of the
// union, it fails to parse exactly when protobuf-es fails to parse (then without a name), and otherwise names the
// resource as the message does; an accepted update is deeply frozen and keeps the decoded message as `raw`.
import { fromBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { DecodeResult } from "../../src/index.js";
import { isDeeplyFrozen } from "../resources/context.js";
import { context } from "./decode-context.js";
import { applyMutations, mutationsArb } from "./mutations.js";
import { RESOURCE_KINDS, type ResourceKind } from "./resource-arbitraries.js";
import { fuzzParameters, fuzzTimeoutMs } from "./settings.js";

function decode(kind: ResourceKind, bytes: Uint8Array): DecodeResult<unknown> {
  return kind.type.decode({ $typeName: "google.protobuf.Any", typeUrl: kind.type.typeUrl, value: bytes }, context);
}

function check(kind: ResourceKind, bytes: Uint8Array): "unparsable" | "invalid" | "valid" {
  const result = decode(kind, bytes);
  expect(Object.keys(result).sort()).toEqual(
    result.ok ? ["name", "ok", "value"] : expect.arrayContaining(["error", "ok"]),
  );
  let message: unknown;
  try {
    message = fromBinary(kind.schema, bytes);
  } catch {
    expect(result.ok).toBe(false);
    expect(!result.ok && result.name).toBeUndefined();
    expect(!result.ok && result.error).toMatch(/^can't parse \w+ resource: ./);
    return "unparsable";
  }
  expect(result.name).toBe(kind.nameOf(message));
  // The same bytes decode to the same result.
  expect(decode(kind, bytes)).toEqual(result);
  if (!result.ok) {
    expect(result.error).toMatch(/./);
    return "invalid";
  }
  expect(isDeeplyFrozen(result.value)).toBe(true);
  expect((result.value as { raw: unknown }).raw).toEqual(message);
  return "valid";
}

describe.each(RESOURCE_KINDS.map((kind) => [kind.label, kind] as const))("%s decode", (_label, kind) => {
  it(
    "on valid and mutated encodings: never throws, parses as protobuf-es parses, returns a well-formed result",
    () => {
      const seen = { unparsable: 0, invalid: 0, valid: 0 };
      fc.assert(
        fc.property(kind.bytes("a"), fc.option(mutationsArb, { nil: undefined }), (bytes, mutations) => {
          seen[check(kind, mutations === undefined ? bytes : applyMutations(bytes, mutations))]++;
        }),
        fuzzParameters(250),
      );
      expect(seen.unparsable).toBeGreaterThan(0);
      expect(seen.valid).toBeGreaterThan(0);
    },
    fuzzTimeoutMs,
  );
});
