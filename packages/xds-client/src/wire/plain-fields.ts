// Reading messages encoded as servers encode them, without protobuf-es: the field walk and the strings that the plain
// readers share (the ADS response reader in transport/, the delta `Resource` reader). Each reader accepts only what
// it recognises and leaves anything else to protobuf-es, which its property test checks it against.

type Latin1Slice = (this: Uint8Array, start: number, end: number) => string;
/** Node's Buffer method that turns bytes into a string one byte per character. */
export const latin1Slice = (Buffer.prototype as unknown as { latin1Slice: Latin1Slice }).latin1Slice;

/** Whether every byte of `bytes[start, end)` is ASCII (then Latin-1 and UTF-8 read them alike). */
export function isAscii(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (bytes[i]! >= 0x80) return false;
  return true;
}

/** `bytes[start, end)` as a string when every byte is ASCII, else undefined. */
export function asciiText(bytes: Uint8Array, start: number, end: number): string | undefined {
  return isAscii(bytes, start, end) ? latin1Slice.call(bytes, start, end) : undefined;
}

/** Whether `text` is the ASCII string `bytes[start, end)` (compared without making that string). */
export function holdsText(bytes: Uint8Array, start: number, end: number, text: string): boolean {
  if (text.length !== end - start) return false;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) !== bytes[start + i]) return false;
  return true;
}

/** The field `nextPlainField` read last: its tag, and its value, `bytes[start, end)`. */
export const plainField = { tag: 0, start: 0, end: 0 };

/**
 * Reads the field at `pos` of `bytes[.., end)` into `plainField` when it is a one-byte tag, then a length below 2^28
 * that fits before `end`; false when it is not so encoded. The next field starts at `plainField.end`.
 */
export function nextPlainField(bytes: Uint8Array, pos: number, end: number): boolean {
  const tag = bytes[pos++]!;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = pos < end ? bytes[pos++] : undefined;
    if (byte === undefined || shift === 28) return false;
    length += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) break;
  }
  if (pos + length > end) return false;
  plainField.tag = tag;
  plainField.start = pos;
  plainField.end = pos + length;
  return true;
}

/**
 * Calls `field(tag, start, end)` for each field of `bytes` (as `nextPlainField` reads them: `field` refuses any tag
 * but those of the length-delimited fields it takes) until it returns false. False when `bytes` is not so encoded
 * or `field` refused one.
 */
export function forEachPlainField(
  bytes: Uint8Array,
  field: (tag: number, start: number, end: number) => boolean,
): boolean {
  let pos = 0;
  const end = bytes.length;
  while (pos < end) {
    if (!nextPlainField(bytes, pos, end)) return false;
    const { tag, start, end: next } = plainField;
    if (!field(tag, start, next)) return false;
    pos = next;
  }
  return true;
}
