// How the client keeps the bytes of a resource it holds: as a string of one character per byte (Latin-1), copied out
// of the response. A view into the response would keep the whole response buffer alive for as long as the resource
// is cached (a re-push changing one of 10,000 resources would pin a buffer of all 10,000 per change); a string holds
// exactly the resource's bytes, on the heap, and compares with `===`. The bytes are rebuilt only where a message is
// wanted: CSDS, a NACKed update's `failed_configuration`, an update's `raw`.
import type { Any } from "@bufbuild/protobuf/wkt";
import { latin1Slice } from "./plain-fields.js";

/**
 * The last view `bytesText` read, and its string: a built-in decoder reads a resource's value for the update's `raw`,
 * and the client, right after (nothing runs in between), keeps the same value (`keptText`).
 */
let lastView: Uint8Array | undefined;
let lastText = "";

/** A resource's bytes as kept: one character per byte. */
export function bytesText(bytes: Uint8Array): string {
  lastText = latin1Slice.call(bytes, 0, bytes.length);
  lastView = bytes;
  return lastText;
}

/** `bytesText(bytes)`, the string the decoder just made of the same view when it made one. */
export function keptText(bytes: Uint8Array): string {
  if (bytes !== lastView) return latin1Slice.call(bytes, 0, bytes.length);
  lastView = undefined;
  return lastText;
}

/** The bytes a `bytesText` string holds (a plain Uint8Array, as protobuf-es reads and makes them). */
export function textBytes(text: string): Uint8Array {
  const buffer = Buffer.from(text, "latin1");
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length);
}

/** The `google.protobuf.Any` of a resource of `typeUrl` whose value `bytesText` kept. */
export function anyOfText(typeUrl: string, text: string): Any {
  return { $typeName: "google.protobuf.Any", typeUrl, value: textBytes(text) };
}
