// The EDS fast path (a hand-written wire decoder) against the slow path (protobuf-es `fromBinary` + the same
// validation): for valid messages built over the whole schema, and for byte-level mutations of their encodings,
// the fast path accepts exactly the bytes `fromBinary` accepts, and then yields the same update (or the same
// validation errors) and the same `raw` message.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { ClusterLoadAssignmentSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { validateClusterLoadAssignment } from "../../src/resources/endpoint.js";
import { endpointResourceType } from "../../src/resources/index.js";
import { ValidationErrors } from "../../src/resources/validation.js";
import { type ClaInit, claArb } from "./cla-arbitrary.js";
import { context } from "./decode-context.js";
import { applyMutations, fromHex, mutationsArb } from "./mutations.js";
import { fuzzParameters, fuzzTimeoutMs } from "./settings.js";

const PARSE_FAILURE = "can't parse ClusterLoadAssignment resource: ";

function encode(init: ClaInit): Uint8Array {
  return toBinary(ClusterLoadAssignmentSchema, create(ClusterLoadAssignmentSchema, init));
}

type Outcome = "unparsable" | "invalid" | "valid";

/** Asserts that the fast path treats `bytes` as the slow path does; returns what the slow path made of them. */
function checkAgainstSlowPath(bytes: Uint8Array): Outcome {
  const fast = endpointResourceType.decode(
    { $typeName: "google.protobuf.Any", typeUrl: endpointResourceType.typeUrl, value: bytes },
    context,
  );
  let message: ReturnType<typeof fromBinary<typeof ClusterLoadAssignmentSchema>>;
  try {
    message = fromBinary(ClusterLoadAssignmentSchema, bytes);
  } catch (error) {
    expect(fast, `protobuf-es rejects (${(error as Error).message})`).toMatchObject({ ok: false });
    expect(!fast.ok && fast.error.startsWith(PARSE_FAILURE)).toBe(true);
    expect(!fast.ok && fast.name).toBeUndefined();
    return "unparsable";
  }
  const errors = new ValidationErrors();
  const update = validateClusterLoadAssignment(message, errors);
  if (!errors.ok) {
    expect(fast).toEqual({ ok: false, name: message.clusterName, error: errors.toString() });
    return "invalid";
  }
  expect(fast.ok, fast.ok ? "" : fast.error).toBe(true);
  if (!fast.ok) return "invalid";
  expect(fast.name).toBe(message.clusterName);
  expect({ ...fast.value }).toEqual(update);
  expect(fast.value.raw).toEqual(message);
  return "valid";
}

describe("EDS fast path = fromBinary + validation", () => {
  it("rejects the malformed inputs found by the reliability review", () => {
    // An lb_endpoints length of 0x13 instead of 0x12: the locality weight becomes part of the endpoint.
    expect(
      checkAgainstSlowPath(fromHex("0a06676f6f642d65121d0a0312016112130a100a0e0a0c120831302e302e302e3118501a020805")),
    ).toBe("unparsable");
    // A cluster name that is not UTF-8.
    expect(checkAgainstSlowPath(fromHex("0a05667a2d65ff"))).toBe("unparsable");
  });

  it("reads a field as its declared type whatever its wire type, and lets a nested message overrun its length", () => {
    // cluster_name sent as a varint (0: an empty string follows), then an endpoints entry of length 1 whose
    // priority field (2 bytes) crosses its end: protobuf-es accepts both, so the fast path must too.
    expect(checkAgainstSlowPath(fromHex("0800"))).toBe("valid");
    expect(checkAgainstSlowPath(fromHex("12012801"))).toBe("valid");
  });

  it(
    "valid messages over the whole schema",
    () => {
      const seen = { unparsable: 0, invalid: 0, valid: 0 };
      fc.assert(
        fc.property(claArb, (init) => {
          seen[checkAgainstSlowPath(encode(init))]++;
        }),
        fuzzParameters(200),
      );
      // Every valid encoding parses; the generator reaches both valid updates and validation failures.
      expect(seen.unparsable).toBe(0);
      expect(seen.valid).toBeGreaterThan(0);
      expect(seen.invalid).toBeGreaterThan(0);
    },
    fuzzTimeoutMs,
  );

  it(
    "mutated encodings: bit flips, truncations, insertions, deletions, length edits",
    () => {
      const seen = { unparsable: 0, invalid: 0, valid: 0 };
      fc.assert(
        fc.property(claArb, mutationsArb, (init, mutations) => {
          seen[checkAgainstSlowPath(applyMutations(encode(init), mutations))]++;
        }),
        fuzzParameters(300),
      );
      expect(seen.unparsable).toBeGreaterThan(0);
      expect(seen.valid + seen.invalid).toBeGreaterThan(0);
    },
    fuzzTimeoutMs,
  );

  it(
    "concatenations of two encodings (proto merge: repeated fields append, singular messages merge)",
    () => {
      fc.assert(
        fc.property(claArb, claArb, mutationsArb, fc.boolean(), (a, b, mutations, mutate) => {
          const joined = new Uint8Array([...encode(a), ...encode(b)]);
          checkAgainstSlowPath(mutate ? applyMutations(joined, mutations) : joined);
        }),
        fuzzParameters(100),
      );
    },
    fuzzTimeoutMs,
  );
});
