// gRPC's length-prefixed messages in a response body, whatever the chunking. A prefix only claims a length: it is
// checked against the receive limit as soon as it is read (RESOURCE_EXHAUSTED), and no reader here reserves memory
// for bytes that have not arrived (docs/decisions.md#connect-xds-receive-limit). The lean unary call splits with
// EnvelopeSplitter; the connect path lets connect's own decoder split, behind EnvelopeGate.
import { Code, ConnectError } from "@connectrpc/connect";

/** One length-prefixed message: its flags byte and its bytes (a copy owned by the message). */
export interface Envelope {
  readonly flags: number;
  readonly data: Uint8Array;
}

/** connect's error for a message longer than the receive limit (its envelope decoder's words). */
export function tooLargeError(length: number, readMaxBytes: number): ConnectError {
  return new ConnectError(
    `message size ${length} is larger than configured readMaxBytes ${readMaxBytes}`,
    Code.ResourceExhausted,
  );
}

/** The big-endian length in bytes 1-4 of a 5-byte prefix. */
function prefixLength(p: Uint8Array): number {
  return ((p[1]! << 24) | (p[2]! << 16) | (p[3]! << 8) | p[4]!) >>> 0;
}

/**
 * Splits a byte stream into length-prefixed messages. A message longer than `readMaxBytes` fails as soon as its
 * prefix is read (RESOURCE_EXHAUSTED), before any message of the same chunk is handed on, as connect's envelope
 * decoder does. `onPrefix` gets each message's declared length (A66's byte count). A message that spans chunks is
 * held as views on the chunks it came in and copied once, when its last byte arrives: what is held never exceeds
 * what arrived, whatever the prefix claims.
 */
export class EnvelopeSplitter {
  private readonly prefix = new Uint8Array(5);
  private prefixFill = 0;
  /** The declared length of the message being read; -1 between messages. */
  private length = -1;
  private flags = 0;
  /** The bytes of the message being read that arrived so far, as views on their chunks. */
  private parts: Uint8Array[] = [];
  private fill = 0;

  constructor(
    private readonly readMaxBytes: number,
    private readonly onPrefix: (length: number) => void,
  ) {}

  /**
   * Whether bytes of an unfinished message are held (at the end of the body: an incomplete message). As in
   * connect's decoder, a prefix read whole counts only once some of its message's bytes arrived: a body that ends
   * right after a complete prefix is not reported incomplete (the call then fails on its missing message or status).
   */
  get partial(): boolean {
    return this.prefixFill > 0 || this.fill > 0;
  }

  /** The bytes held of the unfinished message (besides its 5-byte prefix): at most what arrived of it. */
  get heldBytes(): number {
    return this.prefixFill + this.fill;
  }

  /** The messages completed by `chunk`, in order. */
  split(chunk: Uint8Array): Envelope[] {
    const out: Envelope[] = [];
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      if (this.length < 0) {
        const take = Math.min(5 - this.prefixFill, n - i);
        this.prefix.set(chunk.subarray(i, i + take), this.prefixFill);
        this.prefixFill += take;
        i += take;
        if (this.prefixFill < 5) break;
        this.prefixFill = 0;
        const length = prefixLength(this.prefix);
        // Counted before the size check, as the byte counter sees the prefix before connect's decoder does.
        this.onPrefix(length);
        if (length > this.readMaxBytes) throw tooLargeError(length, this.readMaxBytes);
        this.flags = this.prefix[0]!;
        this.length = length;
        this.fill = 0;
      }
      const take = Math.min(this.length - this.fill, n - i);
      if (take === this.length) {
        // The whole message is in this chunk (also an empty one).
        const data = new Uint8Array(take);
        data.set(chunk.subarray(i, i + take));
        out.push({ flags: this.flags, data });
        this.length = -1;
      } else if (take > 0) {
        this.parts.push(chunk.subarray(i, i + take));
        this.fill += take;
        if (this.fill === this.length) {
          out.push({ flags: this.flags, data: concat(this.parts, this.length) });
          this.parts = [];
          this.fill = 0;
          this.length = -1;
        }
      }
      i += take;
    }
    return out;
  }
}

function concat(parts: readonly Uint8Array[], length: number): Uint8Array {
  const data = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    data.set(part, offset);
    offset += part.length;
  }
  return data;
}

/**
 * Stands in front of connect's envelope decoder, which reserves a message's declared length as soon as it reads the
 * prefix: a response body goes on only up to the end of its last complete message, the rest is held (as views on
 * its chunks) until its message is complete, so connect reserves only for bytes that arrived. Prefixes over
 * `readMaxBytes` fail as connect's decoder fails them (the same error, before any message of the chunk goes on).
 * `onPrefix` gets each message's declared length (A66's byte count).
 */
export class EnvelopeGate {
  /** Bytes of the current prefix still to read (5 at a message boundary), or 0 inside a message. */
  private prefixLeft = 5;
  private length = 0;
  private payloadLeft = 0;
  private held: Uint8Array[] = [];

  constructor(
    private readonly readMaxBytes: number,
    private readonly onPrefix?: (length: number) => void,
  ) {}

  /** The bytes that end complete messages (held ones first), in order; the rest of `chunk` is held. */
  push(chunk: Uint8Array): Uint8Array[] {
    let i = 0;
    let boundary = -1;
    const n = chunk.length;
    while (i < n) {
      if (this.prefixLeft > 0) {
        if (this.prefixLeft <= 4) this.length = this.length * 256 + chunk[i]!;
        i++;
        if (--this.prefixLeft > 0) continue;
        const length = this.length;
        this.length = 0;
        this.onPrefix?.(length);
        if (length > this.readMaxBytes) throw tooLargeError(length, this.readMaxBytes);
        this.payloadLeft = length;
      } else {
        const take = Math.min(this.payloadLeft, n - i);
        i += take;
        this.payloadLeft -= take;
      }
      if (this.payloadLeft === 0) {
        this.prefixLeft = 5;
        boundary = i;
      }
    }
    if (boundary < 0) {
      this.held.push(chunk);
      return [];
    }
    const out = this.held;
    out.push(boundary === n ? chunk : chunk.subarray(0, boundary));
    this.held = boundary === n ? [] : [chunk.subarray(boundary)];
    return out;
  }

  /**
   * The held bytes connect's decoder must see at the end of the body to end the call as it would: a partial prefix
   * (it reports an incomplete envelope); nothing for a complete prefix without any of its message (it reports
   * nothing). A partial message fails here with connect's error, so connect never reserves its length.
   */
  end(): Uint8Array[] {
    const held = this.held;
    this.held = [];
    if (this.prefixLeft > 0) return held;
    if (held.reduce((sum, part) => sum + part.length, 0) > 5) {
      throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
    }
    return [];
  }
}

/** Adds up the declared lengths of the length-prefixed messages of a byte stream, whatever the chunking. */
export class EnvelopeCounter {
  /** Bytes of the current prefix still to read (5 at a message boundary), or 0 inside a message. */
  private prefixLeft = 5;
  private length = 0;
  private payloadLeft = 0;
  total = 0;

  read(chunk: Uint8Array): void {
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      if (this.prefixLeft > 0) {
        // Bytes 1-4 of the prefix are the big-endian message length; byte 0 is the flags.
        if (this.prefixLeft <= 4) this.length = this.length * 256 + chunk[i]!;
        i++;
        if (--this.prefixLeft === 0) {
          this.payloadLeft = this.length;
          this.total += this.length;
          this.length = 0;
          if (this.payloadLeft === 0) this.prefixLeft = 5;
        }
      } else {
        const take = Math.min(this.payloadLeft, n - i);
        i += take;
        this.payloadLeft -= take;
        if (this.payloadLeft === 0) this.prefixLeft = 5;
      }
    }
  }
}
