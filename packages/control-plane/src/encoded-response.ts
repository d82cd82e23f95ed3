import { create, type DescMessage, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import type {
  DeltaDiscoveryResponseSchema,
  DiscoveryResponseSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";

// A discovery response encoded once for every stream that sends it. The only field that differs per stream is the
// nonce, so the body is kept as the bytes before the nonce field and the bytes after it; a stream writes
// head + its nonce + tail. Both are written by protobuf-es itself, from the fields before and after the nonce in
// field number order (the order `toBinary` writes), so the concatenation is byte for byte what `toBinary` writes for
// the whole message (encoded-response.test.ts checks that property).

/** The bytes of a response around its nonce field. */
export interface EncodedBody {
  readonly head: Uint8Array;
  readonly tail: Uint8Array;
}

/** One response on the wire: the parts to write in order and their total size. */
export interface WireMessage {
  readonly parts: readonly Uint8Array[];
  readonly size: number;
}

type ResponseSchema = typeof DiscoveryResponseSchema | typeof DeltaDiscoveryResponseSchema;

/** `message` with only the fields in `names` set, encoded. */
function encodeFields<S extends DescMessage>(
  schema: S,
  message: MessageShape<S>,
  names: readonly string[],
): Uint8Array {
  const partial: Record<string, unknown> = {};
  for (const name of names) partial[name] = (message as Record<string, unknown>)[name];
  return toBinary(schema, create(schema, partial as never));
}

/** Encodes `message` (its nonce is ignored) as the body every stream sending it shares. */
export function encodeBody<S extends ResponseSchema>(schema: S, message: MessageShape<S>): EncodedBody {
  const fields = schema.fields.concat().sort((a, b) => a.number - b.number);
  const nonceAt = fields.findIndex((field) => field.localName === "nonce");
  const names = fields.map((field) => field.localName);
  return {
    head: encodeFields(schema, message, names.slice(0, nonceAt)),
    tail: encodeFields(schema, message, names.slice(nonceAt + 1)),
  };
}

/** The body with this stream's nonce in its place. */
export function withNonce(body: EncodedBody, nonce: string): WireMessage {
  const nonceField = encodeNonce(nonce);
  const parts = [body.head, nonceField, body.tail].filter((part) => part.length > 0);
  return { parts, size: body.head.length + nonceField.length + body.tail.length };
}

/** Field 5 (the nonce in both responses); protobuf-es leaves an empty string out, and so does this. */
function encodeNonce(nonce: string): Uint8Array {
  if (nonce === "") return new Uint8Array(0);
  // This server's nonces are short decimal counters: one-byte length, ASCII.
  if (nonce.length < 128 && /^\d+$/.test(nonce)) {
    const field = Buffer.allocUnsafe(2 + nonce.length);
    field[0] = (5 << 3) | WireType.LengthDelimited;
    field[1] = nonce.length;
    field.write(nonce, 2, "latin1");
    return field;
  }
  return new BinaryWriter().tag(5, WireType.LengthDelimited).string(nonce).finish();
}

/** A message encoded whole (injected responses: built per stream, nothing to share). */
export function wholeMessage<S extends ResponseSchema>(schema: S, message: MessageShape<S>): WireMessage {
  const bytes = toBinary(schema, message);
  return { parts: bytes.length > 0 ? [bytes] : [], size: bytes.length };
}
