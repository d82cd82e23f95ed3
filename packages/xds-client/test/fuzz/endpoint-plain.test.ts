// The plain EDS reader (src/resources/endpoint-plain.ts) against the general path (the wire views, then the
// validation): whenever the plain reader answers, the general path accepts the same bytes and makes the same update,
// key for key, as deeply frozen; and the decoder as a whole (plain reader first) gives what the reference decoding
// (protobuf-es's `fromBinary`, then the validation) gives. Inputs: ClusterLoadAssignments shaped like what control
// planes send, with every way out of the plain reader's reach mixed in (IPv6, non-ASCII, zero weights, missing
// priorities, duplicates, skipped health states, extra fields), byte mutations of them, concatenations (proto merge),
// and messages over the whole schema.
import { create, toBinary } from "@bufbuild/protobuf";
import { ClusterLoadAssignmentSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { ClusterLoadAssignmentViewReader } from "../../src/gen/envoy/config/endpoint/v3/endpoint_view.js";
import { endpointResourceType } from "../../src/index.js";
import { validateClusterLoadAssignment } from "../../src/resources/endpoint.js";
import { readPlainClusterLoadAssignment } from "../../src/resources/endpoint-plain.js";
import { ValidationErrors } from "../../src/resources/validation.js";
import { setReferenceDecoding } from "../../src/resources/view-runtime.js";
import { context, isDeeplyFrozen } from "../resources/context.js";
import { type ClaInit, claArb } from "./cla-arbitrary.js";
import { applyMutations, mutationsArb } from "./mutations.js";
import { fuzzParameters, fuzzTimeoutMs } from "./settings.js";

afterEach(() => setReferenceDecoding(false));

const TYPE_URL = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";

/** Mostly what the plain reader takes; each field sometimes what it leaves to the general path. */
const plainClaArb: fc.Arbitrary<ClaInit> = (() => {
  const often = <T, U>(usual: fc.Arbitrary<T>, rare: fc.Arbitrary<U>, odds = 24): fc.Arbitrary<T | U> =>
    fc.oneof({ weight: odds, arbitrary: usual }, { weight: 1, arbitrary: rare });
  const text = (...values: string[]) => often(fc.constantFrom(...values), fc.constantFrom("é", "\u{1F600}", "a\u0000"));
  const address = often(
    fc.constantFrom("10.0.0.1", "10.0.0.2", "192.168.1.200", "127.0.0.1"),
    fc.constantFrom("::1", "2001:db8::1", "10.0.0.256", "01.2.3.4", "host", ""),
  );
  const port = often(fc.constantFrom(80, 8080, 443), fc.constantFrom(0, 65535, 65536, 0x0fffffff, 0x10000000), 6);
  const socket = fc.record(
    { address, portSpecifier: fc.record({ case: fc.constant("portValue" as const), value: port }) },
    { requiredKeys: ["address"] },
  );
  const endpoint = fc.record(
    {
      address: socket.map((value) => ({ address: { case: "socketAddress" as const, value } })),
      hostname: text("", "a.example"),
      additionalAddresses: often(fc.constant([]), fc.constant([{ address: {} }])),
    },
    { requiredKeys: ["address"] },
  );
  const lbEndpoint = fc.record(
    {
      hostIdentifier: often(
        endpoint.map((value) => ({ case: "endpoint" as const, value })),
        fc.constant({ case: "endpointName" as const, value: "n" }),
      ),
      healthStatus: often(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 3, max: 9 }), 4),
      loadBalancingWeight: often(fc.integer({ min: 1, max: 3 }), fc.constantFrom(0, 0xffffffff), 6),
    },
    { requiredKeys: ["hostIdentifier"] },
  );
  // Sixteen zones: a priority of more than eight localities (looked up in a set) has a duplicate name about half the
  // time.
  const zones = Array.from({ length: 16 }, (_, i) => `z${i}`);
  const locality = (priority: fc.Arbitrary<number>) =>
    fc.record(
      {
        locality: often(
          fc.record({ region: text("", "r"), zone: text(...zones), subZone: text("", "s") }, { requiredKeys: [] }),
          fc.constant(undefined),
        ),
        lbEndpoints: fc.array(lbEndpoint, { maxLength: 3 }),
        loadBalancingWeight: often(fc.integer({ min: 1, max: 100 }), fc.constantFrom(0, 0x7fffffff, 0xffffffff), 6),
        priority,
        proximity: often(fc.constant(undefined), fc.constant(1)),
      },
      { requiredKeys: ["lbEndpoints", "loadBalancingWeight"] },
    );
  // A priority of more than eight localities (their names looked up in a set), within the plain reader's reach but
  // for a duplicate name about half the time.
  const manyLocalities = fc.array(
    fc.record({
      locality: fc.record({
        region: fc.constantFrom("", "r"),
        zone: fc.constantFrom(...zones),
        subZone: fc.constant(""),
      }),
      lbEndpoints: fc.array(
        fc.record({
          hostIdentifier: fc.record({
            case: fc.constant("endpoint" as const),
            value: fc.record({
              address: fc.ipV4().map((ip) => ({
                address: {
                  case: "socketAddress" as const,
                  value: { address: ip, portSpecifier: { case: "portValue" as const, value: 80 } },
                },
              })),
            }),
          }),
        }),
        { maxLength: 2 },
      ),
      loadBalancingWeight: fc.integer({ min: 1, max: 100 }),
    }),
    { minLength: 9, maxLength: 14 },
  );
  const localities = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.array(locality(often(fc.integer({ min: 0, max: 1 }), fc.constantFrom(2, 5, 0x10000000))), {
        maxLength: 4,
      }),
    },
    { weight: 1, arbitrary: manyLocalities },
  );
  return fc.record(
    {
      clusterName: text("c", "eds-a"),
      endpoints: localities,
      policy: often(fc.constant(undefined), fc.constant({ dropOverloads: [] })),
    },
    { requiredKeys: ["endpoints"] },
  ) as fc.Arbitrary<ClaInit>;
})();

const encode = (init: ClaInit) => toBinary(ClusterLoadAssignmentSchema, create(ClusterLoadAssignmentSchema, init));

const inputs = fc.oneof(
  { weight: 3, arbitrary: plainClaArb.map(encode) },
  { weight: 1, arbitrary: claArb.map(encode) },
);

/** The frozen-ness of every object in `value`, as a tree of the same shape. */
function frozenShape(value: unknown): unknown {
  if (value === null || typeof value !== "object") return undefined;
  const entries = Object.entries(value).map(([key, item]) => [key, frozenShape(item)]);
  return { frozen: Object.isFrozen(value), entries };
}

/** The general path alone: the update, or undefined when the bytes are unreadable or invalid. */
function general(bytes: Uint8Array) {
  let view: ReturnType<typeof ClusterLoadAssignmentViewReader.read>;
  try {
    view = ClusterLoadAssignmentViewReader.read(bytes);
  } catch {
    return undefined;
  }
  const errors = new ValidationErrors();
  const update = validateClusterLoadAssignment(view, errors);
  return errors.ok ? update : undefined;
}

function decode(bytes: Uint8Array, reference: boolean) {
  setReferenceDecoding(reference);
  try {
    return endpointResourceType.decode({ $typeName: "google.protobuf.Any", typeUrl: TYPE_URL, value: bytes }, context);
  } finally {
    setReferenceDecoding(false);
  }
}

/** Asserts the plain reader agrees with the general path on `bytes`; true when it answered. */
function check(bytes: Uint8Array): boolean {
  const plain = readPlainClusterLoadAssignment(bytes);
  const whole = decode(bytes, false);
  expect(whole).toEqual(decode(bytes, true));
  if (plain === undefined) return false;
  const slow = general(bytes);
  expect(slow).toBeDefined();
  expect(JSON.stringify(plain)).toBe(JSON.stringify(slow));
  expect(frozenShape(plain)).toEqual(frozenShape(slow));
  // The decoder took the plain reader's update, frozen whole.
  expect(whole.ok && JSON.stringify(whole.value)).toBe(JSON.stringify(plain));
  expect(whole.ok && isDeeplyFrozen(whole.value)).toBe(true);
  return true;
}

describe("the plain EDS reader = the general path", () => {
  it(
    "on messages shaped like a control plane's, on messages over the whole schema, and on their mutations",
    () => {
      const seen = { plain: 0, general: 0, mutatedPlain: 0 };
      fc.assert(
        fc.property(inputs, fc.option(mutationsArb, { nil: undefined, freq: 2 }), (bytes, mutations) => {
          const answered = check(mutations === undefined ? bytes : applyMutations(bytes, mutations));
          if (!answered) seen.general++;
          else if (mutations === undefined) seen.plain++;
          else seen.mutatedPlain++;
        }),
        fuzzParameters(1000),
      );
      // Both ways are taken, the plain one for a good part of what control planes send, and for mutated bytes too.
      expect(seen.plain).toBeGreaterThan(50);
      expect(seen.general).toBeGreaterThan(100);
      expect(seen.mutatedPlain).toBeGreaterThan(0);
    },
    fuzzTimeoutMs,
  );

  it(
    "on concatenations of two encodings (proto merge: repeated fields append, singular ones merge or repeat)",
    () => {
      let plain = 0;
      fc.assert(
        fc.property(plainClaArb.map(encode), plainClaArb.map(encode), (a, b) => {
          if (check(new Uint8Array([...a, ...b]))) plain++;
        }),
        fuzzParameters(300),
      );
      expect(plain).toBeGreaterThan(0);
    },
    fuzzTimeoutMs,
  );
});
