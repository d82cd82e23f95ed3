// gRPC's length-prefixed messages on an HTTP/2 stream: a flag byte (1 = compressed), a 4-byte big-endian length,
// then the message. Requests are split here; responses are framed by `frameHeader`.

/** One message read from the request stream, or the reason the stream cannot go on. */
export type FrameResult =
  | { readonly kind: "message"; readonly compressed: boolean; readonly bytes: Uint8Array }
  | { readonly kind: "too-large"; readonly length: number }
  | { readonly kind: "bad-flag"; readonly flag: number };

/** The size of a message's prefix. */
export const FRAME_HEADER_BYTES = 5;

/** The 5-byte prefix of an uncompressed message of `length` bytes. */
export function frameHeader(length: number): Buffer {
  const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  writeFrameHeader(header, length);
  return header;
}

/** Writes that prefix at the start of `out`. */
export function writeFrameHeader(out: Buffer, length: number): void {
  out[0] = 0;
  out.writeUInt32BE(length, 1);
}

/**
 * Splits request bytes into messages. A header announcing more than `maxMessageBytes` is reported as soon as its 5
 * bytes arrive, before any of the message is buffered; after a `too-large` or `bad-flag` result the reader takes
 * nothing more. Holds at most one partial message.
 */
export function createFrameReader(maxMessageBytes: number): {
  push(chunk: Uint8Array): FrameResult[];
  /** Bytes of an incomplete message (a client that half-closes here sent a truncated message). */
  readonly partialBytes: number;
} {
  let chunks: Uint8Array[] = [];
  let buffered = 0;
  let needed = -1; // the current message's length once its header is read
  let compressed = false;
  let failed = false;

  const take = (count: number): Uint8Array => {
    const first = chunks[0] as Uint8Array;
    if (first.length >= count) {
      const out = first.subarray(0, count);
      if (first.length === count) chunks.shift();
      else chunks[0] = first.subarray(count);
      buffered -= count;
      return out;
    }
    const out = new Uint8Array(count);
    let offset = 0;
    while (offset < count) {
      const chunk = chunks[0] as Uint8Array;
      const n = Math.min(chunk.length, count - offset);
      out.set(chunk.subarray(0, n), offset);
      offset += n;
      if (n === chunk.length) chunks.shift();
      else chunks[0] = chunk.subarray(n);
    }
    buffered -= count;
    return out;
  };

  return {
    get partialBytes() {
      return buffered + (needed >= 0 ? 5 : 0);
    },
    push(chunk) {
      if (failed || chunk.length === 0) return [];
      chunks.push(chunk);
      buffered += chunk.length;
      const out: FrameResult[] = [];
      for (;;) {
        if (needed < 0) {
          if (buffered < 5) break;
          const header = take(5);
          const flag = header[0] as number;
          const size = Buffer.from(header.buffer, header.byteOffset, 5).readUInt32BE(1);
          if (flag > 1) {
            failed = true;
            chunks = [];
            out.push({ kind: "bad-flag", flag });
            break;
          }
          if (size > maxMessageBytes) {
            failed = true;
            chunks = [];
            out.push({ kind: "too-large", length: size });
            break;
          }
          needed = size;
          compressed = flag === 1;
        }
        if (buffered < needed) break;
        out.push({ kind: "message", compressed, bytes: needed === 0 ? new Uint8Array(0) : take(needed) });
        needed = -1;
      }
      return out;
    },
  };
}
