// Byte-level mutations of valid protobuf encodings, as fast-check arbitraries. A mutation is data (an operation, a
// position as a fraction of the input, a payload), applied by `applyMutations`, so fast-check can shrink it.
import fc from "fast-check";

/** Byte sequences that probe the edges of the wire format and of UTF-8. */
export const INTERESTING_BYTES: readonly (readonly number[])[] = [
  [0x00], // tag with field number 0
  [0x0e], // field 1, wire type 6
  [0x0f], // field 1, wire type 7
  [0x0b], // field 1, START_GROUP
  [0x0c], // field 1, END_GROUP
  [0x0b, 0x0c], // an empty group
  [0x13, 0x14], // field 2 group
  [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01], // an 11-byte varint
  [0x80, 0x80, 0x80, 0x80, 0x10], // a 5-byte varint overflowing uint32
  [0xff, 0xff, 0xff, 0xff, 0x0f], // 2^32 - 1
  [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], // -1 as an int32 varint (a negative length)
  [0x80, 0x00], // an overlong zero
  [0x0d, 0x01, 0x02], // a truncated fixed32
  [0x09, 0x01, 0x02, 0x03, 0x04], // a truncated fixed64
  [0x0a, 0x01, 0xff], // field 1 string: invalid UTF-8
  [0x0a, 0x02, 0xc0, 0x80], // overlong NUL
  [0x0a, 0x03, 0xed, 0xa0, 0x80], // an encoded surrogate
  [0x0a, 0x03, 0xef, 0xbb, 0xbf], // a byte order mark
  [0x0a, 0x04, 0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
  [0x0a, 0x02, 0xc3, 0xa9], // "é", valid
  [0xf8, 0xff, 0xff, 0xff, 0x0f, 0x00], // the largest field number, varint
  [0x9a, 0x05, 0x00], // an unknown length-delimited field (83)
  [0x12, 0x00], // an empty field 2
  [0x22, 0x00], // an empty field 4
];

export type Mutation =
  | { readonly op: "flip"; readonly at: number; readonly bit: number }
  | { readonly op: "set"; readonly at: number; readonly value: number }
  | { readonly op: "nudge"; readonly at: number; readonly delta: number }
  | { readonly op: "truncate"; readonly at: number }
  | { readonly op: "insert"; readonly at: number; readonly bytes: readonly number[] }
  | { readonly op: "delete"; readonly at: number; readonly length: number }
  | { readonly op: "duplicate"; readonly at: number; readonly length: number; readonly to: number };

const position = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });

export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("flip" as const), at: position, bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ op: fc.constant("set" as const), at: position, value: fc.integer({ min: 0, max: 255 }) }),
  // A changed length prefix (most small bytes in a nested encoding are lengths or tags).
  fc.record({ op: fc.constant("nudge" as const), at: position, delta: fc.constantFrom(-2, -1, 1, 2) }),
  fc.record({ op: fc.constant("truncate" as const), at: position }),
  fc.record({
    op: fc.constant("insert" as const),
    at: position,
    bytes: fc.oneof(
      fc.constantFrom(...INTERESTING_BYTES),
      fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 4 }),
    ),
  }),
  fc.record({ op: fc.constant("delete" as const), at: position, length: fc.integer({ min: 1, max: 4 }) }),
  fc.record({
    op: fc.constant("duplicate" as const),
    at: position,
    length: fc.integer({ min: 1, max: 16 }),
    to: position,
  }),
);

/** One to three mutations. */
export const mutationsArb = fc.array(mutationArb, { minLength: 1, maxLength: 3 });

function index(at: number, length: number): number {
  return Math.min(length, Math.floor(at * (length + 1)));
}

export function applyMutation(input: Uint8Array, mutation: Mutation): Uint8Array {
  const bytes = [...input];
  const i = index(mutation.at, bytes.length);
  switch (mutation.op) {
    case "flip":
      if (i < bytes.length) bytes[i] = bytes[i]! ^ (1 << mutation.bit);
      break;
    case "set":
      if (i < bytes.length) bytes[i] = mutation.value;
      break;
    case "nudge":
      if (i < bytes.length) bytes[i] = (bytes[i]! + mutation.delta + 256) % 256;
      break;
    case "truncate":
      bytes.length = i;
      break;
    case "insert":
      bytes.splice(i, 0, ...mutation.bytes);
      break;
    case "delete":
      bytes.splice(i, mutation.length);
      break;
    case "duplicate": {
      const slice = bytes.slice(i, i + mutation.length);
      bytes.splice(index(mutation.to, bytes.length), 0, ...slice);
      break;
    }
  }
  return new Uint8Array(bytes);
}

export function applyMutations(input: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
  return mutations.reduce(applyMutation, input);
}

/** `hex` as bytes. */
export function fromHex(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex, "hex"));
}
