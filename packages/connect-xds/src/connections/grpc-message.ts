// The `grpc-message` of a response, percent-decoded leniently as gRPC's HTTP/2 protocol says: an invalid
// percent-encoding never throws and never replaces the status (docs/decisions.md#connect-xds-grpc-message).
// connect decodes the value with decodeURIComponent, which throws on it (`URI malformed`, and the call ended
// UNKNOWN); the connection rewrites such a value on arrival (normalizeGrpcMessage) into the percent-encoding of its
// lenient decoding, so connect's decoding yields the lenient text on both call paths.
import type * as http2 from "node:http2";

const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
/** What encodeURIComponent throws on (header values from the wire are Latin-1 and have none; set ones may). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48; // 0-9
  const lower = code | 0x20;
  if (lower >= 97 && lower <= 102) return lower - 87; // a-f
  return -1;
}

/** The byte of a valid `%XX` at `i` of `value`, else -1. */
function escapeAt(value: string, i: number): number {
  if (value.charCodeAt(i) !== 37 /* % */ || i + 2 >= value.length) return -1;
  const high = hexValue(value.charCodeAt(i + 1));
  const low = hexValue(value.charCodeAt(i + 2));
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

/**
 * Percent-decodes `value` leniently: each run of valid `%XX` escapes is read as UTF-8, an invalid sequence in it
 * becoming U+FFFD; a `%` not followed by two hex digits stays as it is, as does every other character.
 */
export function decodeGrpcMessage(value: string): string {
  if (value.indexOf("%") < 0) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return decodePiecewise(value);
  }
}

/**
 * The lenient decoding, piece by piece: equal to `decodeURIComponent(value)` whenever that does not throw (a property
 * test checks it), so decodeGrpcMessage's fast path changes nothing.
 */
export function decodePiecewise(value: string): string {
  let out = "";
  let i = 0;
  const n = value.length;
  while (i < n) {
    const byte = escapeAt(value, i);
    if (byte < 0) {
      const next = value.indexOf("%", i + 1);
      const end = next < 0 ? n : next;
      out += value.slice(i, end);
      i = end;
      continue;
    }
    const bytes: number[] = [byte];
    i += 3;
    for (let b = escapeAt(value, i); b >= 0; b = escapeAt(value, i)) {
      bytes.push(b);
      i += 3;
    }
    out += utf8.decode(Uint8Array.from(bytes));
  }
  return out;
}

/**
 * Rewrites the `grpc-message` of received headers or trailers that decodeURIComponent would throw on into the
 * percent-encoding of its lenient decoding, in place (the object every listener of the event gets). Valid values,
 * the common case, are left alone.
 */
export function normalizeGrpcMessage(raw: http2.IncomingHttpHeaders): void {
  const value = raw["grpc-message"];
  if (typeof value !== "string" || value.indexOf("%") < 0) return;
  try {
    decodeURIComponent(value);
  } catch {
    raw["grpc-message"] = encodeURIComponent(decodeGrpcMessage(value).replace(LONE_SURROGATE, "\uFFFD"));
  }
}
