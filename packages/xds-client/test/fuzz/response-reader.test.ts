// The default transport reads each ADS response message itself (src/transport/response-reader.ts): a message encoded
// as servers encode one without protobuf-es, any other with it. Properties, for any message bytes (valid responses
// with every field, plain or not; two of them concatenated, which protobuf reads as one merged message; then the same
// with byte-level mutations):
//   - where the plain reader reads a message, protobuf-es reads the same message, key for key (SotW's resources as
//     ranges of the message: the same bytes, each range a view);
//   - the transport's reading gives protobuf-es's message, or fails where protobuf-es fails, as Connect's transport
//     failed (INTERNAL, `parse binary: <protobuf-es's message>`).
import { create, type DescMessage, fromBinary, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type DeltaResponseBytes, DeltaResponseBytesSchema } from "@xdskit/protos/xdskit/client/v1/delta_response_pb";
import { type SotwResponseBytes, SotwResponseBytesSchema } from "@xdskit/protos/xdskit/client/v1/sotw_response_pb";
import fc from "fast-check";
import { expect, it } from "vitest";
import { errorMessage } from "../../src/shared/xds-error.js";
import {
  readDeltaResponse,
  readPlainDeltaResponse,
  readPlainSotwResponse,
  readSotwResponse,
} from "../../src/transport/response-reader.js";
import type { DeltaResponseRanges, SotwResponseRanges } from "../../src/transport/transport-types.js";
import { applyMutations, INTERESTING_BYTES, mutationsArb } from "./mutations.js";
import { fuzzParameters, fuzzTimeoutMs } from "./settings.js";

const textArb = fc.constantFrom("", "1", "v2", "type.googleapis.com/envoy.config.cluster.v3.Cluster", "é", "n\u0000");
const entryArb = fc.uint8Array({ maxLength: 12 });
const controlPlaneArb = fc.option(
  fc.constantFrom("", "cp-1").map((identifier) => ({ identifier })),
  { nil: undefined },
);
const errorsArb = fc.array(
  fc.constantFrom("a", "b").map((name) => ({ resourceName: { name }, errorDetail: { code: 5, message: "gone" } })),
  { maxLength: 1 },
);

const sotwArb = fc
  .record({
    versionInfo: textArb,
    typeUrl: textArb,
    nonce: textArb,
    resources: fc.array(entryArb, { maxLength: 4 }),
    canary: fc.boolean(),
    controlPlane: controlPlaneArb,
    resourceErrors: errorsArb,
  })
  .map((init) => toBinary(SotwResponseBytesSchema, create(SotwResponseBytesSchema, init)));

const deltaArb = fc
  .record({
    systemVersionInfo: textArb,
    typeUrl: textArb,
    nonce: textArb,
    resources: fc.array(entryArb, { maxLength: 4 }),
    removedResources: fc.array(textArb, { maxLength: 2 }),
    removedResourceNames: fc.array(
      fc.constantFrom("x", "y").map((name) => ({ name })),
      { maxLength: 1 },
    ),
    controlPlane: controlPlaneArb,
    resourceErrors: errorsArb,
  })
  .map((init) => toBinary(DeltaResponseBytesSchema, create(DeltaResponseBytesSchema, init)));

/** Messages, two of them concatenated, odd fields after them, and all of these mutated. */
function bytesArb(message: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> {
  const joined = fc.oneof(
    message,
    fc.tuple(message, message).map(([a, b]) => new Uint8Array([...a, ...b])),
    fc
      .tuple(message, fc.constantFrom(...INTERESTING_BYTES))
      .map(([bytes, trailing]) => new Uint8Array([...bytes, ...trailing])),
  );
  return fc.oneof(
    joined,
    fc.tuple(joined, mutationsArb).map(([bytes, mutations]) => applyMutations(bytes, mutations)),
  );
}

function check<Desc extends DescMessage, Read>(
  schema: Desc,
  arb: fc.Arbitrary<Uint8Array>,
  readPlain: (bytes: Uint8Array) => Read | undefined,
  read: (bytes: Uint8Array) => Read,
  /** What was read, as the message protobuf-es reads. */
  asMessage: (read: Read) => MessageShape<Desc>,
): void {
  const seen = { plain: 0, slowOnly: 0, failed: 0 };
  fc.assert(
    fc.property(arb, (bytes) => {
      let slow: MessageShape<Desc>;
      try {
        slow = fromBinary(schema, bytes);
      } catch (error) {
        expect(readPlain(bytes)).toBeUndefined();
        let thrown: unknown;
        try {
          read(bytes);
        } catch (e) {
          thrown = e;
        }
        expect(thrown).toBeInstanceOf(ConnectError);
        expect((thrown as ConnectError).code).toBe(Code.Internal);
        expect((thrown as ConnectError).rawMessage).toBe(`parse binary: ${errorMessage(error)}`);
        seen.failed += 1;
        return;
      }
      const plain = readPlain(bytes);
      if (plain !== undefined) {
        expect(asMessage(plain)).toStrictEqual(slow);
        expect(Object.keys(asMessage(plain))).toEqual(Object.keys(slow));
        seen.plain += 1;
      } else {
        seen.slowOnly += 1;
      }
      expect(asMessage(read(bytes))).toStrictEqual(slow);
    }),
    fuzzParameters(2000),
  );
  // Each way through came up.
  expect(seen.plain).toBeGreaterThan(0);
  expect(seen.slowOnly).toBeGreaterThan(0);
  expect(seen.failed).toBeGreaterThan(0);
}

it(
  "a SotW response reads as protobuf-es reads it, without protobuf-es when plain",
  () => check(SotwResponseBytesSchema, bytesArb(sotwArb), readPlainSotwResponse, readSotwResponse, sotwMessage),
  fuzzTimeoutMs,
);

it(
  "a delta response reads as protobuf-es reads it, without protobuf-es when plain",
  () => check(DeltaResponseBytesSchema, bytesArb(deltaArb), readPlainDeltaResponse, readDeltaResponse, deltaMessage),
  fuzzTimeoutMs,
);

/** A SotW response read as ranges, as the `SotwResponseBytes` it stands for: each range a view of the message. */
function sotwMessage(read: SotwResponseRanges | SotwResponseBytes): SotwResponseBytes {
  if (read.$typeName === "xdskit.client.v1.SotwResponseBytes") return read;
  const { memory, starts, ends } = read.entries;
  return create(SotwResponseBytesSchema, {
    versionInfo: read.versionInfo,
    resources: Array.from(starts, (start, i) => memory.subarray(start, ends[i])),
    typeUrl: read.typeUrl,
    nonce: read.nonce,
  });
}

/** A delta response read as ranges, as the `DeltaResponseBytes` it stands for. */
function deltaMessage(read: DeltaResponseRanges | DeltaResponseBytes): DeltaResponseBytes {
  if (read.$typeName === "xdskit.client.v1.DeltaResponseBytes") return read;
  const { memory, starts, ends } = read.entries;
  return create(DeltaResponseBytesSchema, {
    systemVersionInfo: read.systemVersionInfo,
    resources: Array.from(starts, (start, i) => memory.subarray(start, ends[i])),
    typeUrl: read.typeUrl,
    removedResources: [...read.removedResources],
    nonce: read.nonce,
  });
}

it("the responses servers send are plain", () => {
  const sotw = create(SotwResponseBytesSchema, {
    versionInfo: "7",
    typeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
    nonce: "n7",
    resources: [new Uint8Array([1, 2]), new Uint8Array(300).fill(9)],
  });
  const ranges = readPlainSotwResponse(toBinary(SotwResponseBytesSchema, sotw));
  expect(ranges && sotwMessage(ranges)).toStrictEqual(sotw);
  const delta = create(DeltaResponseBytesSchema, {
    systemVersionInfo: "7",
    typeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
    nonce: "n7",
    resources: [new Uint8Array([1, 2])],
    removedResources: ["gone-1", "gone-2"],
  });
  const deltaRanges = readPlainDeltaResponse(toBinary(DeltaResponseBytesSchema, delta));
  expect(deltaRanges && deltaMessage(deltaRanges)).toStrictEqual(delta);
});
