import { create, type DescMessage, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { type Any, AnySchema } from "@bufbuild/protobuf/wkt";
import {
  type DeltaDiscoveryResponseSchema,
  type DiscoveryResponseSchema,
  type Resource,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";

// A discovery response encoded once for every stream that sends it. The only field that differs per stream is the
// nonce, so the body is kept as the bytes before the nonce field and the bytes after it; a stream writes
// head + its nonce + tail. The pieces are encoded by protobuf-es itself, field group by field group in field number
// order (the order `toBinary` writes), so the concatenation is byte for byte what `toBinary` writes for the whole message
// (encoded-response.test.ts checks that property).

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

/** `resources` (field 2 in both responses) items, encoded as that field (tag, length, message), once per message. */
const resourceFields = new WeakMap<Any | Resource, Uint8Array>();

function resourceField(message: Any | Resource): Uint8Array {
  let field = resourceFields.get(message);
  if (!field) {
    const bytes =
      message.$typeName === AnySchema.typeName
        ? toBinary(AnySchema, message as Any)
        : toBinary(ResourceSchema, message as Resource);
    field = new BinaryWriter().tag(2, WireType.LengthDelimited).bytes(bytes).finish();
    resourceFields.set(message, field);
  }
  return field;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const part of parts) size += part.length;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** `message` with only the fields in `names` set, encoded. */
function encodeFields<S extends DescMessage>(
  schema: S,
  message: MessageShape<S>,
  names: readonly string[],
): Uint8Array {
  if (names.length === 0) return new Uint8Array(0);
  const partial: Record<string, unknown> = {};
  for (const name of names) partial[name] = (message as Record<string, unknown>)[name];
  return toBinary(schema, create(schema, partial as never));
}

/**
 * Encodes `message` (its nonce is ignored) as the body every stream sending it shares. `resources` items are
 * encoded once per item object and reused by every body that lists them.
 */
export function encodeBody<S extends ResponseSchema>(schema: S, message: MessageShape<S>): EncodedBody {
  const head: Uint8Array[] = [];
  const tail: Uint8Array[] = [];
  let group: string[] = [];
  let out = head;
  for (const field of schema.fields.concat().sort((a, b) => a.number - b.number)) {
    if (field.localName === "nonce" || field.localName === "resources") {
      out.push(encodeFields(schema, message, group));
      group = [];
      if (field.localName === "nonce") out = tail;
      else for (const item of message.resources) out.push(resourceField(item));
      continue;
    }
    group.push(field.localName);
  }
  out.push(encodeFields(schema, message, group));
  return { head: concat(head), tail: concat(tail) };
}

/** The body with this stream's nonce in its place. */
export function withNonce(body: EncodedBody, nonce: string): WireMessage {
  // Field 5 in both responses; protobuf-es leaves an empty string out, and so does this.
  const nonceField =
    nonce === "" ? new Uint8Array(0) : new BinaryWriter().tag(5, WireType.LengthDelimited).string(nonce).finish();
  const parts = [body.head, nonceField, body.tail].filter((part) => part.length > 0);
  return { parts, size: body.head.length + nonceField.length + body.tail.length };
}

/** A message encoded whole (injected responses: built per stream, nothing to share). */
export function wholeMessage<S extends ResponseSchema>(schema: S, message: MessageShape<S>): WireMessage {
  const bytes = toBinary(schema, message);
  return { parts: bytes.length > 0 ? [bytes] : [], size: bytes.length };
}
