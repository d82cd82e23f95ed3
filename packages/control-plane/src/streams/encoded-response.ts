import {
  create,
  type DescField,
  type DescMessage,
  fromBinary,
  type Message,
  type MessageShape,
  ScalarType,
  toBinary,
} from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { type Any, FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import type {
  DeltaDiscoveryResponseSchema,
  DiscoveryResponseSchema,
  Resource,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { FRAME_HEADER_BYTES, writeFrameHeader } from "./grpc-frames.js";

// A discovery response encoded once for every stream that sends it. The only field that differs per stream is the
// nonce, so the body is kept as the bytes before the nonce field and the bytes after it; a stream writes
// head + its nonce + tail. Both are written in field number order (the order `toBinary` writes): the envelope's
// strings and the resources in the shapes this server sends are written here, anything else by protobuf-es, and the
// resources are framed as protobuf-es frames them; the concatenation is byte for byte what `toBinary` writes for the
// whole message (encoded-response.test.ts and prepared-response.test.ts check that property).

/** The bytes of a response around its nonce field. */
export interface EncodedBody {
  readonly head: Uint8Array;
  readonly tail: Uint8Array;
}

/** One response on the wire: the parts to write in order and their total size. */
export interface WireMessage {
  readonly parts: readonly Uint8Array[];
  readonly size: number;
  /**
   * When the message was built in one buffer: that buffer with the gRPC frame header before the parts' bytes (the
   * parts are views of it), to write as is rather than copy again behind a header.
   */
  readonly framed?: Uint8Array;
}

type ResponseSchema = typeof DiscoveryResponseSchema | typeof DeltaDiscoveryResponseSchema;

const NO_BYTES = new Uint8Array(0);

/** proto3's presence: a field left out when at its default. */
const IMPLICIT_PRESENCE = FeatureSet_FieldPresence.IMPLICIT;
/** A proto3 string field without presence: written when not empty. */
const isPlainString = (field: DescField): boolean =>
  field.fieldKind === "scalar" && field.scalar === ScalarType.STRING && field.presence === IMPLICIT_PRESENCE;

/** Whether `value` is what protobuf-es leaves out for `field`: a false bool, an empty list, an unset message. */
function leftOut(field: DescField, value: unknown): boolean {
  switch (field.fieldKind) {
    case "scalar":
      return field.scalar === ScalarType.BOOL && field.presence === IMPLICIT_PRESENCE && value === false;
    case "list":
      return (value as readonly unknown[]).length === 0;
    case "message":
      return value === undefined;
    default:
      return false;
  }
}

/**
 * `message` with only `fields` set, encoded. A response's envelope is nearly always strings (its versions, type URL
 * and nonce), a false `canary`, empty lists and no `control_plane`: those are written here, the strings as protobuf-es
 * writes them and the rest left out as it leaves them out, without building a message for its reflection to walk
 * (three per response). Any other value sends the whole set to protobuf-es.
 */
function encodeFields<S extends DescMessage>(
  schema: S,
  message: MessageShape<S>,
  fields: readonly DescField[],
): Uint8Array {
  const values = message as Record<string, unknown>;
  let size = 0;
  for (const field of fields) {
    const value = values[field.localName];
    if (isPlainString(field) && typeof value === "string") size += stringSize(value);
    else if (!leftOut(field, value)) return encodeByProtobufEs(schema, values, fields);
  }
  if (size === 0) return NO_BYTES;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const field of fields) {
    if (isPlainString(field)) at = writeString(out, at, field.number, values[field.localName] as string);
  }
  // Sizing and writing follow the same rules; a mismatch would send uninitialised memory.
  if (at !== size) throw new Error(`encoded ${at} of ${size} bytes`);
  return out;
}

function encodeByProtobufEs(
  schema: DescMessage,
  values: Record<string, unknown>,
  fields: readonly DescField[],
): Uint8Array {
  const partial: Record<string, unknown> = {};
  for (const field of fields) partial[field.localName] = values[field.localName];
  return toBinary(schema, create(schema, partial as never));
}

// Length-delimited fields (tag, length, bytes) written as protobuf-es writes them.

function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value >>>= 7;
    size++;
  }
  return size;
}

/** The size of a length-delimited field holding `length` bytes. */
const framedSize = (length: number): number => 1 + varintSize(length) + length;

/** Writes a length-delimited field's tag and length; returns where its bytes go. */
function writeHeader(out: Buffer, at: number, field: number, length: number): number {
  out[at++] = (field << 3) | WireType.LengthDelimited;
  while (length >= 0x80) {
    out[at++] = (length & 0x7f) | 0x80;
    length >>>= 7;
  }
  out[at++] = length;
  return at;
}

// proto3 string and bytes fields: left out when empty. Strings are UTF-8, a lone surrogate written as U+FFFD, as
// protobuf-es's TextEncoder writes it.
const stringSize = (text: string): number => (text === "" ? 0 : framedSize(Buffer.byteLength(text)));
const bytesSize = (bytes: Uint8Array): number => (bytes.length === 0 ? 0 : framedSize(bytes.length));

function writeString(out: Buffer, at: number, field: number, text: string): number {
  if (text === "") return at;
  at = writeHeader(out, at, field, Buffer.byteLength(text));
  return at + out.write(text, at, "utf8");
}

function writeBytes(out: Buffer, at: number, field: number, bytes: Uint8Array): number {
  if (bytes.length === 0) return at;
  at = writeHeader(out, at, field, bytes.length);
  out.set(bytes, at);
  return at + bytes.length;
}

type WithUnknown = { readonly $unknown?: unknown };

/**
 * A `Resource` given by its parts rather than as a message: building one message per resource is most of the cost of
 * a first delta response of many resources, and nothing needs the message to write it. Written as protobuf-es writes
 * `Resource { version, resource, name }`, the version in decimal, then `trailer`.
 */
export interface PlainResourceParts {
  /** Left out when empty (a variant is named by its `resource_name`, in the trailer). */
  readonly name: string;
  readonly version: number;
  readonly any: Any;
  /**
   * The encoded fields after `name`, in field number order: `cache_control` (7) and `resource_name` (8), as
   * `resourceTrailer` writes them; undefined when neither is set.
   */
  readonly trailer?: Uint8Array | undefined;
}

/** What goes in a response's `resources`: a message, or (delta) a plain Resource by its parts. */
export type ResponseResource = Message | PlainResourceParts;

const isParts = (resource: ResponseResource): resource is PlainResourceParts => !("$typeName" in resource);
/** A version written here by hand: what `String` writes in plain decimal digits (else protobuf-es writes it). */
const isDecimal = (version: number): boolean => Number.isSafeInteger(version) && version >= 0;

// The shapes this server puts in `resources`, written here at a fraction of the cost of protobuf-es's reflection:
// an Any (SotW), and a `Resource` with a version, the resource and a name (how this server sends one unless it is a
// variant or not to be cached), as a message or by its parts; by its parts, also with the `cache_control` and
// `resource_name` of a variant or a resource not to be cached (SotW sends such a `Resource` in an Any). Anything else
// is left to protobuf-es.

// The resources of a response nearly always share one type URL: its field is encoded once and copied.
let lastTypeUrl = "";
let lastTypeUrlField: Uint8Array = new Uint8Array(0);

/** Field 1 of an Any, `type_url`, encoded. */
function typeUrlField(typeUrl: string): Uint8Array {
  if (typeUrl !== lastTypeUrl) {
    const field = Buffer.allocUnsafe(stringSize(typeUrl));
    writeString(field, 0, 1, typeUrl);
    lastTypeUrl = typeUrl;
    lastTypeUrlField = field;
  }
  return lastTypeUrlField;
}

/** Any: type_url = 1, value = 2. */
const anySize = (any: Any): number => typeUrlField(any.typeUrl).length + bytesSize(any.value);
function writeAny(out: Buffer, at: number, any: Any): number {
  const field = typeUrlField(any.typeUrl);
  out.set(field, at);
  return writeBytes(out, at + field.length, 2, any.value);
}
const plainAny = (any: Any | undefined): any is Any => any !== undefined && (any as WithUnknown).$unknown === undefined;

/** Whether a Resource message is the plain shape. */
function isPlain(r: Resource & WithUnknown): r is Resource & { readonly resource: Any } {
  return (
    r.$unknown === undefined &&
    r.aliases.length === 0 &&
    r.ttl === undefined &&
    r.cacheControl === undefined &&
    r.resourceName === undefined &&
    r.metadata === undefined &&
    plainAny(r.resource)
  );
}

/**
 * A plain Resource: version = 1, resource = 2 (written even when empty: a message field), name = 3, then the
 * trailer's fields. Given by its parts, the version is a number, written in decimal (ASCII: its length is its size).
 */
const plainSize = (version: string | number, any: Any, name: string, trailer?: Uint8Array): number =>
  (typeof version === "number" ? framedSize(decimalLength(version)) : stringSize(version)) +
  framedSize(anySize(any)) +
  stringSize(name) +
  (trailer?.length ?? 0);
function writePlain(
  out: Buffer,
  at: number,
  version: string | number,
  any: Any,
  name: string,
  trailer?: Uint8Array,
): number {
  at = typeof version === "number" ? writeDecimal(out, at, 1, version) : writeString(out, at, 1, version);
  at = writeAny(out, writeHeader(out, at, 2, anySize(any)), any);
  at = writeString(out, at, 3, name);
  if (trailer === undefined) return at;
  out.set(trailer, at);
  return at + trailer.length;
}

/** `Resource.CacheControl { do_not_cache: true }` as field 7: tag, length 2, then field 1's tag and `true`. */
const DO_NOT_CACHE_FIELD = Uint8Array.of((7 << 3) | WireType.LengthDelimited, 2, (1 << 3) | WireType.Varint, 1);

/**
 * The fields of a `Resource` after its name, encoded: `cache_control { do_not_cache: true }` when `doNotCache`, then
 * `resource_name` (field 8) holding `resourceName`, an encoded `ResourceName`, when given. Undefined when neither.
 */
export function resourceTrailer(doNotCache: boolean, resourceName: Uint8Array | undefined): Uint8Array | undefined {
  if (resourceName === undefined) return doNotCache ? DO_NOT_CACHE_FIELD : undefined;
  const size = (doNotCache ? DO_NOT_CACHE_FIELD.length : 0) + framedSize(resourceName.length);
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  if (doNotCache) {
    out.set(DO_NOT_CACHE_FIELD, 0);
    at = DO_NOT_CACHE_FIELD.length;
  }
  at = writeHeader(out, at, 8, resourceName.length);
  out.set(resourceName, at);
  return out;
}

/** Whether `parts` are written here (else a message is built for protobuf-es). */
const writable = (parts: PlainResourceParts): boolean => plainAny(parts.any) && isDecimal(parts.version);

/**
 * The bytes of the `Resource` `parts` stand for (a SotW response's wrapped resource is an Any of them); undefined when
 * they are not written here (`writable`).
 */
export function encodeResourceParts(parts: PlainResourceParts): Uint8Array | undefined {
  if (!writable(parts)) return undefined;
  const size = plainSize(parts.version, parts.any, parts.name, parts.trailer);
  const out = Buffer.allocUnsafe(size);
  // Sizing and writing follow the same rules; a mismatch would send uninitialised memory.
  const at = writePlain(out, 0, parts.version, parts.any, parts.name, parts.trailer);
  if (at !== size) throw new Error(`encoded ${at} of ${size} bytes`);
  return out;
}

/** The number of decimal digits of a non-negative integer. */
function decimalLength(value: number): number {
  let length = 1;
  while (value >= 10) {
    value = Math.floor(value / 10);
    length++;
  }
  return length;
}

/** A string field holding `value` in decimal, as `String(value)` writes it (never empty). */
function writeDecimal(out: Buffer, at: number, field: number, value: number): number {
  const length = decimalLength(value);
  at = writeHeader(out, at, field, length);
  for (let i = at + length - 1; i >= at; i--) {
    out[i] = 0x30 + (value % 10);
    value = Math.floor(value / 10);
  }
  return at + length;
}

/** The size of a resource written here; undefined for a shape left to protobuf-es. */
function shapeSize(resource: ResponseResource): number | undefined {
  if (isParts(resource)) {
    return writable(resource) ? plainSize(resource.version, resource.any, resource.name, resource.trailer) : undefined;
  }
  if (resource.$typeName === "google.protobuf.Any") {
    return (resource as Any & WithUnknown).$unknown === undefined ? anySize(resource as Any) : undefined;
  }
  if (resource.$typeName === "envoy.service.discovery.v3.Resource" && isPlain(resource as Resource)) {
    const r = resource as Resource & { readonly resource: Any };
    return plainSize(r.version, r.resource, r.name);
  }
  return undefined;
}

function writeShape(out: Buffer, at: number, resource: ResponseResource): number {
  if (isParts(resource)) {
    return writePlain(out, at, resource.version, resource.any, resource.name, resource.trailer);
  }
  if (resource.$typeName === "google.protobuf.Any") return writeAny(out, at, resource as Any);
  const r = resource as Resource & { readonly resource: Any };
  return writePlain(out, at, r.version, r.resource, r.name);
}

/** A resource left to protobuf-es, as a message of the list's schema (`Resource` when given by its parts). */
function asMessage(schema: DescMessage, resource: ResponseResource): Message {
  if (!isParts(resource)) return resource;
  // The trailer holds a Resource's fields 7 and 8: read back, they are those fields of the message.
  const trailed = resource.trailer === undefined ? {} : fromBinary(schema, resource.trailer);
  return create(schema, {
    ...trailed,
    name: resource.name,
    version: String(resource.version),
    resource: resource.any,
  } as never);
}

const RESOURCES_FIELD = 2;

/**
 * The bytes before the nonce: `before`, then field 2 (`resources`, in both responses) as protobuf-es writes a
 * repeated message field (for each element its tag, its length and its bytes, in order), then `after`. Sized first,
 * then written into one buffer.
 */
function encodeHead(
  before: Uint8Array,
  schema: DescMessage,
  resources: readonly ResponseResource[],
  after: Uint8Array,
): Uint8Array {
  const sizes: number[] = [];
  const byProtobufEs: (Uint8Array | undefined)[] = [];
  let total = before.length + after.length;
  const partsAllowed = schema.typeName === "envoy.service.discovery.v3.Resource";
  // Both walks are forEach callbacks, no loop of this function's own: a first response of many resources would make
  // this function hot, to be compiled again at its next call (a change's few resources) beside that change; the
  // callbacks the first response made hot are what the change runs.
  resources.forEach((resource) => {
    if (!partsAllowed && isParts(resource)) {
      throw new TypeError(`${schema.typeName} resources cannot be given by the parts of a Resource`);
    }
    let size = shapeSize(resource);
    let bytes: Uint8Array | undefined;
    if (size === undefined) {
      bytes = toBinary(schema, asMessage(schema, resource));
      size = bytes.length;
    }
    sizes.push(size);
    byProtobufEs.push(bytes);
    total += framedSize(size);
  });
  const out = Buffer.allocUnsafe(total);
  out.set(before, 0);
  let at = before.length;
  resources.forEach((resource, i) => {
    at = writeHeader(out, at, RESOURCES_FIELD, sizes[i] as number);
    const bytes = byProtobufEs[i];
    if (bytes) {
      out.set(bytes, at);
      at += bytes.length;
    } else {
      at = writeShape(out, at, resource);
    }
  });
  out.set(after, at);
  // Sizing and writing follow the same rules; a mismatch would send uninitialised memory.
  if (at + after.length !== total) throw new Error(`encoded ${at + after.length} of ${total} bytes`);
  return out;
}

/** A response schema's fields in field number order, cut around `resources` and the nonce. */
interface Layout {
  readonly before: readonly DescField[];
  /** The schema of `resources`' elements. */
  readonly resourceSchema: DescMessage;
  readonly between: readonly DescField[];
  readonly after: readonly DescField[];
}

const layouts = new Map<ResponseSchema, Layout>();

function layoutOf(schema: ResponseSchema): Layout {
  let layout = layouts.get(schema);
  if (!layout) {
    const fields = schema.fields.concat().sort((a, b) => a.number - b.number);
    const nonceAt = fields.findIndex((field) => field.localName === "nonce");
    const resourcesAt = fields.findIndex((field) => field.number === RESOURCES_FIELD);
    const resources = fields[resourcesAt];
    if (
      resources?.fieldKind !== "list" ||
      resources.listKind !== "message" ||
      resources.localName !== "resources" ||
      resourcesAt > nonceAt
    ) {
      throw new Error(`${schema.typeName}: field 2 is not a repeated message \`resources\` before the nonce`);
    }
    layout = {
      before: fields.slice(0, resourcesAt),
      resourceSchema: resources.message,
      between: fields.slice(resourcesAt + 1, nonceAt),
      after: fields.slice(nonceAt + 1),
    };
    layouts.set(schema, layout);
  }
  return layout;
}

/**
 * Encodes `message` (its nonce is ignored) as the body every stream sending it shares; with `resources`, those in
 * place of the message's own.
 */
export function encodeBody<S extends ResponseSchema>(
  schema: S,
  message: MessageShape<S>,
  resources: readonly ResponseResource[] = message.resources,
): EncodedBody {
  const layout = layoutOf(schema);
  return {
    head: encodeHead(
      encodeFields(schema, message, layout.before),
      layout.resourceSchema,
      resources,
      encodeFields(schema, message, layout.between),
    ),
    tail: encodeFields(schema, message, layout.after),
  };
}

/**
 * Below this many bytes, a body with its nonce is one buffer, its gRPC frame header in front: one allocation rather
 * than a nonce field and a list, and none more to frame it.
 */
const JOINED_BYTES = 4096;

/** The body with this stream's nonce in its place. */
export function withNonce(body: EncodedBody, nonce: string): WireMessage {
  const { head, tail } = body;
  const size = head.length + stringSize(nonce) + tail.length;
  if (size <= JOINED_BYTES) {
    const framed = Buffer.allocUnsafe(FRAME_HEADER_BYTES + size);
    writeFrameHeader(framed, size);
    framed.set(head, FRAME_HEADER_BYTES);
    framed.set(tail, writeString(framed, FRAME_HEADER_BYTES + head.length, 5, nonce));
    return { parts: size > 0 ? [framed.subarray(FRAME_HEADER_BYTES)] : [], size, framed };
  }
  const nonceField = encodeNonce(nonce);
  const parts = [body.head, nonceField, body.tail].filter((part) => part.length > 0);
  return { parts, size: body.head.length + nonceField.length + body.tail.length };
}

/** Field 5 (the nonce in both responses); left out when empty, as protobuf-es does. */
function encodeNonce(nonce: string): Uint8Array {
  const field = Buffer.allocUnsafe(stringSize(nonce));
  writeString(field, 0, 5, nonce);
  return field;
}

/** A message encoded whole (injected responses: built per stream, nothing to share). */
export function wholeMessage<S extends ResponseSchema>(schema: S, message: MessageShape<S>): WireMessage {
  const bytes = toBinary(schema, message);
  return { parts: bytes.length > 0 ? [bytes] : [], size: bytes.length };
}
