// A76's endpoint hash key read from the wire (src/resources/endpoint-hash-key.ts) against protobuf-es: LbEndpoint
// bytes written field by field, in orders and repetitions protobuf-es itself never writes (a map entry's value
// before its key, a key or value twice, a missing value, the metadata field sent twice, Value's oneof set twice,
// unknown fields), decode to the hash key that protobuf-es's message gives, or fail alike.
import { fromBinary } from "@bufbuild/protobuf";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { LbEndpointSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_components_pb";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readLbEndpoint } from "../../src/gen/envoy/config/endpoint/v3/endpoint_components_view.js";
import { hashKeyFromMetadata } from "../../src/resources/endpoint-hash-key.js";
import { fuzzParameters } from "../fuzz/settings.js";

type Write = (w: BinaryWriter) => void;

const field =
  (no: number, write: Write): Write =>
  (w) => {
    w.tag(no, WireType.LengthDelimited).fork();
    write(w);
    w.join();
  };
const text =
  (no: number, value: string): Write =>
  (w) =>
    w.tag(no, WireType.LengthDelimited).string(value);
const all =
  (parts: readonly Write[]): Write =>
  (w) => {
    for (const part of parts) part(w);
  };

/** A google.protobuf.Value body: one to three members of its oneof (the last counts), maybe an unknown field. */
const members: readonly Write[] = [
  (w) => w.tag(2, WireType.Bit64).double(1.5),
  (w) => w.tag(4, WireType.Varint).bool(true),
  (w) => w.tag(1, WireType.Varint).int32(0),
  field(5, () => {}),
  field(6, () => {}),
  (w) => w.tag(9, WireType.Varint).uint32(7),
];
const valueArb: fc.Arbitrary<Write> = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom("pod-1", "pod-2", "", "é-ü").map((s) => text(3, s)) },
      { weight: 6, arbitrary: fc.constantFrom(...members) },
    ),
    { minLength: 0, maxLength: 3 },
  )
  .map(all);

/** One map entry body: keys and values (any order, maybe twice or missing), maybe a stray tag. */
function entryArb(keys: readonly string[], valueBody: fc.Arbitrary<Write>): fc.Arbitrary<Write> {
  return fc
    .array(
      fc.oneof(
        fc.constantFrom(...keys).map((k) => text(1, k)),
        valueBody.map((v) => field(2, v)),
      ),
      { minLength: 0, maxLength: 4 },
    )
    .map(all);
}

/** A google.protobuf.Struct body: `fields` entries, maybe an unknown field. */
const structArb: fc.Arbitrary<Write> = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: entryArb(["hash_key", "hash_key", "other", ""], valueArb).map((e) => field(1, e)) },
      { weight: 1, arbitrary: fc.constant<Write>((w) => w.tag(7, WireType.Varint).uint32(1)) },
    ),
    { maxLength: 3 },
  )
  .map(all);

/** An envoy.config.core.v3.Metadata body: filter_metadata entries and a typed_filter_metadata entry. */
const metadataArb: fc.Arbitrary<Write> = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: entryArb(["envoy.lb", "envoy.lb", "istio", ""], structArb).map((e) => field(1, e)) },
      {
        weight: 1,
        arbitrary: fc.constant(field(2, all([text(1, "envoy.lb"), field(2, text(1, "type.googleapis.com/x"))]))),
      },
    ),
    { maxLength: 3 },
  )
  .map(all);

/** An LbEndpoint: its metadata field zero to three times (merged), between other fields. */
const lbEndpointArb: fc.Arbitrary<Uint8Array> = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: metadataArb.map((m) => field(3, m)) },
      { weight: 1, arbitrary: fc.constant<Write>((w) => w.tag(2, WireType.Varint).int32(1)) },
    ),
    { maxLength: 4 },
  )
  .map((parts) => {
    const w = new BinaryWriter();
    all(parts)(w);
    return w.finish();
  });

function fastKey(bytes: Uint8Array): string {
  return readLbEndpoint(new BinaryReader(bytes), bytes.length, 1, undefined).hashKey;
}

function slowKey(bytes: Uint8Array): string {
  return hashKeyFromMetadata(fromBinary(LbEndpointSchema, bytes).metadata);
}

describe("A76 endpoint hash key from the wire", () => {
  it("reads the key protobuf-es's message gives, for any order and repetition of the fields", () => {
    let keyed = 0;
    fc.assert(
      fc.property(lbEndpointArb, (bytes) => {
        const slow = slowKey(bytes);
        expect(fastKey(bytes)).toBe(slow);
        if (slow !== "") keyed++;
      }),
      fuzzParameters(2000),
    );
    // The inputs reach the interesting side: endpoints with a key.
    expect(keyed).toBeGreaterThan(20);
  });

  it("fails where protobuf-es fails on nesting past its recursion limit, and reads the key just below it", () => {
    // envoy.lb's Struct holds `hash_key` and a chain of `n` Structs nested through Values.
    const outcome = (read: (bytes: Uint8Array) => string, bytes: Uint8Array) => {
      try {
        return read(bytes);
      } catch (error) {
        return `error: ${(error as Error).message}`;
      }
    };
    const seen = new Set<string>();
    for (let n = 44; n <= 52; n++) {
      let nested: Write = () => {};
      for (let i = 0; i < n; i++) nested = field(1, all([text(1, "x"), field(2, field(5, nested))]));
      const w = new BinaryWriter();
      const lb = all([field(1, all([text(1, "hash_key"), field(2, text(3, "deep"))])), nested]);
      field(3, field(1, all([text(1, "envoy.lb"), field(2, lb)])))(w);
      const bytes = w.finish();
      const slow = outcome(slowKey, bytes);
      expect(outcome(fastKey, bytes)).toBe(slow);
      seen.add(slow.startsWith("error") ? "error" : slow);
    }
    expect([...seen].sort()).toEqual(["deep", "error"]);
  });

  it("fails where protobuf-es fails (a truncated metadata field)", () => {
    const w = new BinaryWriter();
    field(
      3,
      field(1, all([text(1, "envoy.lb"), field(2, field(1, all([text(1, "hash_key"), field(2, text(3, "k"))])))])),
    )(w);
    const bytes = w.finish();
    expect(fastKey(bytes)).toBe("k");
    const truncated = bytes.subarray(0, bytes.length - 2);
    expect(() => slowKey(truncated)).toThrow();
    expect(() => fastKey(truncated)).toThrow();
  });
});
