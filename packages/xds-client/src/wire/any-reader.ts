// A SotW entry's bytes read as the `google.protobuf.Any` they encode: directly when encoded as servers encode one,
// else by protobuf-es; an entry that does not read fails the whole response (docs/architecture.md#the-byte-identical-skip).
import { fromBinary } from "@bufbuild/protobuf";
import { type Any, AnySchema } from "@bufbuild/protobuf/wkt";
import { errorMessage, StatusCode } from "../shared/xds-error.js";

/**
 * A response that cannot be read, as the transport reports one it cannot parse: the stream fails with INTERNAL and
 * `parse binary: …` (docs/architecture.md#the-byte-identical-skip).
 */
export class UnreadableResponseError extends Error {
  readonly code = StatusCode.INTERNAL;
  readonly rawMessage: string;
  constructor(cause: unknown) {
    const rawMessage = `parse binary: ${errorMessage(cause)}`;
    super(rawMessage);
    this.rawMessage = rawMessage;
  }
}

/** Type URLs an entry may have, as strings and as their UTF-8 bytes (`expectTypeUrls`). */
export interface ExpectedTypeUrls {
  readonly urls: readonly string[];
  readonly encoded: readonly Uint8Array[];
}

/** What `readAny` compares an entry's type URL with, worked out once per response. */
export function expectTypeUrls(...urls: string[]): ExpectedTypeUrls {
  const encoder = new TextEncoder();
  return { urls, encoded: urls.map((url) => encoder.encode(url)) };
}

/** Whether `bytes` holds `url` at `pos`. */
function holds(bytes: Uint8Array, pos: number, url: Uint8Array): boolean {
  for (let i = 0; i < url.length; i++) if (bytes[pos + i] !== url[i]) return false;
  return true;
}

/**
 * An Any encoded the way every server encodes one (its `type_url`, one of `expected`, then its `value`, each once,
 * lengths below 2^28), read without protobuf-es: the message `fromBinary` reads from such bytes, with the type URL
 * string shared by every entry. Undefined for any other encoding.
 */
export function readPlainAny(bytes: Uint8Array, expected: ExpectedTypeUrls): Any | undefined {
  return readPlainAnyIn(bytes, 0, bytes.length, expected);
}

/** `readPlainAny` of the Any that is `bytes[start, end)` (no view made of it: its value is the one view). */
export function readPlainAnyIn(
  bytes: Uint8Array,
  start: number,
  end: number,
  expected: ExpectedTypeUrls,
): Any | undefined {
  const valueStart = plainAnyValue(bytes, start, end, expected);
  if (valueStart < 0) return undefined;
  return { $typeName: "google.protobuf.Any", typeUrl: plainAny.typeUrl, value: bytes.subarray(valueStart, end) };
}

/** The type URL (one of `expected.urls`) of the Any `plainAnyValue` read last. */
export const plainAny = { typeUrl: "" };

/**
 * Where the value of the Any that is `bytes[start, end)` starts (it ends at `end`) when the Any is plain, as
 * `readPlainAnyIn` takes one, its type URL then in `plainAny`; -1 when it is not.
 */
export function plainAnyValue(bytes: Uint8Array, start: number, end: number, expected: ExpectedTypeUrls): number {
  const urlLength = bytes[start + 1]!;
  if (end - start < 2 || bytes[start] !== 0x0a || urlLength >= 0x80) return -1;
  let typeUrl: string | undefined;
  for (let i = 0; i < expected.urls.length; i++) {
    const url = expected.encoded[i]!;
    if (url.length === urlLength && holds(bytes, start + 2, url)) typeUrl = expected.urls[i];
  }
  let pos = start + 2 + urlLength;
  if (typeUrl === undefined || pos >= end || bytes[pos] !== 0x12) return -1;
  pos += 1;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = pos < end ? bytes[pos++] : undefined;
    if (byte === undefined || shift === 28) return -1;
    length += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) break;
  }
  if (pos + length !== end) return -1;
  plainAny.typeUrl = typeUrl;
  return pos;
}

/**
 * A SotW entry's bytes as the `google.protobuf.Any` they encode, read as protobuf-es reads it inside the envelope: the
 * same checks (tags, bounds, UTF-8 of `type_url`) and the same recursion budget (the envelope is one level up). A
 * failure fails the whole response, as it did when the envelope was read with `Any` resources. An entry of an
 * `expected` type URL encoded as servers encode it is read directly (`readPlainAny`), to the same message.
 */
export function readAny(bytes: Uint8Array, expected?: ExpectedTypeUrls): Any {
  return readAnyIn(bytes, 0, bytes.length, expected);
}

/** `readAny` of the entry that is `bytes[start, end)`: a view of it is made only for protobuf-es. */
export function readAnyIn(bytes: Uint8Array, start: number, end: number, expected?: ExpectedTypeUrls): Any {
  const plain = expected === undefined ? undefined : readPlainAnyIn(bytes, start, end, expected);
  if (plain !== undefined) return plain;
  try {
    return fromBinary(AnySchema, bytes.subarray(start, end), { recursionLimit: 99 });
  } catch (error) {
    throw new UnreadableResponseError(error);
  }
}
