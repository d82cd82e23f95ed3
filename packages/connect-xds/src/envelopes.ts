// gRPC's length-prefixed messages in a response body: splitting a byte stream into them whatever the chunking.
import { Code, ConnectError } from "@connectrpc/connect";

/** One length-prefixed message: its flags byte and its bytes (a copy owned by the message). */
export interface Envelope {
  readonly flags: number;
  readonly data: Uint8Array;
}

/**
 * Splits a byte stream into length-prefixed messages whatever the chunking. A message longer than `readMaxBytes`
 * fails as soon as its prefix is read (RESOURCE_EXHAUSTED), before any message of the same chunk is handed on, as
 * connect's envelope decoder does. `onPrefix` gets each message's declared length (A66's byte count).
 */
export class EnvelopeSplitter {
  private readonly prefix = new Uint8Array(5);
  private prefixFill = 0;
  private current: Uint8Array | undefined;
  private flags = 0;
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
    return this.prefixFill > 0 || (this.current !== undefined && this.fill > 0);
  }

  /** The messages completed by `chunk`, in order. */
  split(chunk: Uint8Array): Envelope[] {
    const out: Envelope[] = [];
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      if (this.current === undefined) {
        const take = Math.min(5 - this.prefixFill, n - i);
        this.prefix.set(chunk.subarray(i, i + take), this.prefixFill);
        this.prefixFill += take;
        i += take;
        if (this.prefixFill < 5) break;
        this.prefixFill = 0;
        const p = this.prefix;
        const length = ((p[1]! << 24) | (p[2]! << 16) | (p[3]! << 8) | p[4]!) >>> 0;
        // Counted before the size check, as the byte counter sees the prefix before connect's decoder does.
        this.onPrefix(length);
        if (length > this.readMaxBytes) {
          throw new ConnectError(
            `message size ${length} is larger than configured readMaxBytes ${this.readMaxBytes}`,
            Code.ResourceExhausted,
          );
        }
        this.flags = p[0]!;
        this.current = new Uint8Array(length);
        this.fill = 0;
      }
      const take = Math.min(this.current.length - this.fill, n - i);
      this.current.set(chunk.subarray(i, i + take), this.fill);
      this.fill += take;
      i += take;
      if (this.fill === this.current.length) {
        out.push({ flags: this.flags, data: this.current });
        this.current = undefined;
      }
    }
    return out;
  }
}
