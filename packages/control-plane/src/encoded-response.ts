import { create, type DescMessage, type Message, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import type { Any } from "@bufbuild/protobuf/wkt";
import type {
  DeltaDiscoveryResponseSchema,
  DiscoveryResponseSchema,
  Resource,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";

// A discovery response encoded once for every stream that sends it. The only field that differs per stream is the
// nonce, so the body is kept as the bytes before the nonce field and the bytes after it; a stream writes
// head + its nonce + tail. Both are written in field number order (the order `toBinary` writes) by protobuf-es
// itself, except the resources, which are written here in the shapes this server sends (anything else by
// protobuf-es) and framed as protobuf-es frames them; the concatenation is byte for byte what `toBinary` writes for
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

function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value >>>= 7;
    size++;
  }
  return size;
}

function writeVarint(out: Buffer, at: number, value: number): number {
  while (value >= 0x80) {
    out[at++] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  out[at++] = value;
  return at;
}

/** The size of a length-delimited field of `length` bytes (tag, length, bytes); 0 for an empty one left out. */
const fieldSize = (length: number): number => (length === 0 ? 0 : 1 + varintSize(length) + length);

function writeField(out: Buffer, at: number, field: number, bytes: Uint8Array): number {
  if (bytes.length === 0) return at;
  out[at++] = (field << 3) | WireType.LengthDelimited;
  at = writeVarint(out, at, bytes.length);
  out.set(bytes, at);
  return at + bytes.length;
}

/** UTF-8 of the last strings seen: a response's resources share their type URL. */
let lastText = "";
let lastTextBytes: Uint8Array = new Uint8Array(0);
function utf8(text: string): Uint8Array {
  if (text !== lastText) {
    lastText = text;
    lastTextBytes = Buffer.from(text, "utf8");
  }
  return lastTextBytes;
}

/** An Any as protobuf-es writes it (type_url = 1, value = 2, each left out when empty). */
function encodeAny(any: Any): Uint8Array {
  const typeUrl = utf8(any.typeUrl);
  const out = Buffer.allocUnsafe(fieldSize(typeUrl.length) + fieldSize(any.value.length));
  writeField(out, writeField(out, 0, 1, typeUrl), 2, any.value);
  return out;
}

/**
 * A delta `Resource` with only a version, a name and the resource (how this server sends one unless it is a
 * variant or not to be cached), as protobuf-es writes it: version = 1, resource = 2 (written even when empty), name
 * = 3, empty strings left out. Undefined for any other shape.
 */
function encodePlainResource(resource: Resource): Uint8Array | undefined {
  const r = resource as Resource & { $unknown?: unknown };
  if (
    r.$unknown !== undefined ||
    r.aliases.length > 0 ||
    r.ttl !== undefined ||
    r.cacheControl !== undefined ||
    r.resourceName !== undefined ||
    r.metadata !== undefined ||
    r.resource === undefined ||
    (r.resource as Any & { $unknown?: unknown }).$unknown !== undefined
  ) {
    return undefined;
  }
  const version = Buffer.from(r.version, "utf8");
  const inner = encodeAny(r.resource);
  const name = Buffer.from(r.name, "utf8");
  const out = Buffer.allocUnsafe(
    fieldSize(version.length) + 1 + varintSize(inner.length) + inner.length + fieldSize(name.length),
  );
  let at = writeField(out, 0, 1, version);
  out[at++] = (2 << 3) | WireType.LengthDelimited;
  at = writeVarint(out, at, inner.length);
  out.set(inner, at);
  writeField(out, at + inner.length, 3, name);
  return out;
}

/**
 * One resource of a response (an Any in SotW, a Resource in delta) encoded: the shapes this server sends are written
 * here, byte for byte as protobuf-es writes them (encoded-response.test.ts), at a fraction of the cost of its
 * reflection; anything else by protobuf-es.
 */
function encodeResource(schema: DescMessage, resource: Message): Uint8Array {
  if (
    resource.$typeName === "google.protobuf.Any" &&
    (resource as Any & { $unknown?: unknown }).$unknown === undefined
  ) {
    return encodeAny(resource as Any);
  }
  if (resource.$typeName === "envoy.service.discovery.v3.Resource") {
    const bytes = encodePlainResource(resource as Resource);
    if (bytes) return bytes;
  }
  return toBinary(schema, resource);
}

/**
 * Field 2 (`resources`, in both responses) as protobuf-es writes a repeated message field: for each element its tag,
 * its length and its bytes, in order.
 */
function encodeResources(schema: DescMessage, resources: readonly Message[]): Uint8Array {
  const parts = resources.map((resource) => encodeResource(schema, resource));
  let size = 0;
  for (const part of parts) size += 1 + varintSize(part.length) + part.length;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const part of parts) {
    out[at++] = (RESOURCES_FIELD << 3) | WireType.LengthDelimited;
    at = writeVarint(out, at, part.length);
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const RESOURCES_FIELD = 2;

function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const nonEmpty = parts.filter((part) => part.length > 0);
  return nonEmpty.length === 1 ? (nonEmpty[0] as Uint8Array) : Buffer.concat(nonEmpty);
}

/** Encodes `message` (its nonce is ignored) as the body every stream sending it shares. */
export function encodeBody<S extends ResponseSchema>(schema: S, message: MessageShape<S>): EncodedBody {
  const fields = schema.fields.concat().sort((a, b) => a.number - b.number);
  const nonceAt = fields.findIndex((field) => field.localName === "nonce");
  const resourcesAt = fields.findIndex((field) => field.number === RESOURCES_FIELD);
  const resourcesField = fields[resourcesAt];
  const names = fields.map((field) => field.localName);
  // The fields before the nonce, in field number order: those before `resources`, `resources`, the rest.
  const head =
    resourcesField?.fieldKind === "list" && resourcesField.listKind === "message" && resourcesAt < nonceAt
      ? concatBytes([
          encodeFields(schema, message, names.slice(0, resourcesAt)),
          encodeResources(
            resourcesField.message,
            (message as unknown as Record<string, readonly Message[]>)[resourcesField.localName] ?? [],
          ),
          encodeFields(schema, message, names.slice(resourcesAt + 1, nonceAt)),
        ])
      : encodeFields(schema, message, names.slice(0, nonceAt));
  return { head, tail: encodeFields(schema, message, names.slice(nonceAt + 1)) };
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
