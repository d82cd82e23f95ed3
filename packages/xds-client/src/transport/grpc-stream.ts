// A bidi gRPC stream on connect-node's HTTP/2 client, with the message framing read here
// (docs/architecture.md#the-response-reader): Connect's transport hands each response to protobuf-es through a chain of
// async iterables, and has no place for a reader of our own between the framing and the message. Everything under
// the framing (sessions, keepalive, HTTP/2 errors, cancellation) and the gRPC headers and trailers are still Connect's.
import { Code, ConnectError } from "@connectrpc/connect";
import { encodeEnvelope, type UniversalClientFn } from "@connectrpc/connect/protocol";
import {
  requestHeaderWithCompression,
  validateResponseWithCompression,
  validateTrailer,
} from "@connectrpc/connect/protocol-grpc";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";

/** What the server may compress its messages with (what Connect's gRPC transport offered). */
const ACCEPT_COMPRESSION = [compressionGzip, compressionBrotli];
const COMPRESSED = 1;

/** A gRPC stream's framing: one flags byte, then the message's length as 4 bytes, big-endian. */
const PREFIX_BYTES = 5;

export interface GrpcStreamOptions<Req, Res> {
  /** The method's URL. */
  readonly url: string;
  /** Largest message accepted, in bytes, checked before anything is allocated for it (and after decompressing). */
  readonly readMaxBytes: number;
  readonly encode: (request: Req) => Uint8Array;
  readonly parse: (message: Uint8Array) => Res;
}

/**
 * Collects the bytes of a response body into messages. Each message gets its own memory, exactly its size (what the
 * client keeps of it, and the decode memo's ranges, then hold no more than the message).
 */
export class MessageSplitter {
  private chunks: Uint8Array[] = [];
  /** Bytes held in `chunks`, past `offset` into the first. */
  private held = 0;
  private offset = 0;
  /** The prefix of the message being collected, once read. */
  private flags = -1;
  private length = 0;

  constructor(private readonly readMaxBytes: number) {}

  /** Whether part of a message is held (at the end of the body, a truncated message). */
  get partial(): boolean {
    return this.held > 0 || this.flags >= 0;
  }

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.held += chunk.length;
  }

  /** The next whole message, or undefined until more bytes arrive. */
  next(): { readonly flags: number; readonly data: Uint8Array } | undefined {
    if (this.flags < 0) {
      if (this.held < PREFIX_BYTES) return undefined;
      const prefix = this.take(PREFIX_BYTES);
      const flags = prefix[0]!;
      const length = ((prefix[1]! << 24) | (prefix[2]! << 16) | (prefix[3]! << 8) | prefix[4]!) >>> 0;
      if (flags !== 0 && flags !== COMPRESSED) {
        throw new ConnectError(`protocol error: message flags ${flags}`, Code.Internal);
      }
      if (length > this.readMaxBytes) {
        throw new ConnectError(
          `message size ${length} is larger than configured readMaxBytes ${this.readMaxBytes}`,
          Code.ResourceExhausted,
        );
      }
      this.flags = flags;
      this.length = length;
    }
    if (this.held < this.length) return undefined;
    const data = this.take(this.length);
    const flags = this.flags;
    this.flags = -1;
    return { flags, data };
  }

  /** The next `n` held bytes (n <= held), copied into memory of their own. */
  private take(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const chunk = this.chunks[0]!;
      const count = Math.min(n - filled, chunk.length - this.offset);
      out.set(chunk.subarray(this.offset, this.offset + count), filled);
      filled += count;
      this.offset += count;
      if (this.offset === chunk.length) {
        this.chunks.shift();
        this.offset = 0;
      }
    }
    this.held -= n;
    return out;
  }
}

/**
 * Opens a bidi stream: `input`'s requests are sent in order; the responses are read as they arrive. Failures are
 * ConnectErrors, as from Connect's transport. When the responses end or fail, or `signal` aborts, `input` is told to
 * stop (its pending and later writes reject).
 */
export function openGrpcStream<Req, Res>(
  client: UniversalClientFn,
  input: AsyncIterable<Req>,
  signal: AbortSignal,
  options: GrpcStreamOptions<Req, Res>,
): AsyncIterator<Res> {
  const requests = input[Symbol.asyncIterator]();
  let stopped = false;
  const stop = (error?: unknown): void => {
    if (stopped) return;
    stopped = true;
    if (error !== undefined) requests.throw?.(error).catch(() => {});
    requests.return?.().catch(() => {});
  };
  signal.addEventListener("abort", () => stop(signal.reason), { once: true });
  const body: AsyncIterable<Uint8Array> = {
    [Symbol.asyncIterator]: () => ({
      next: () =>
        requests
          .next()
          .then((result) =>
            result.done ? result : { done: false, value: encodeEnvelope(0, options.encode(result.value)) },
          ),
      return: () => {
        stop();
        return Promise.resolve({ done: true, value: undefined });
      },
    }),
  };
  const responses = readResponses(client, body, signal, options);
  return {
    next: () =>
      responses.next().then(
        (result) => {
          if (result.done) stop();
          return result;
        },
        (reason: unknown) => {
          const error = ConnectError.from(reason);
          stop(error);
          throw error;
        },
      ),
  };
}

async function* readResponses<Req, Res>(
  client: UniversalClientFn,
  body: AsyncIterable<Uint8Array>,
  signal: AbortSignal,
  options: GrpcStreamOptions<Req, Res>,
): AsyncGenerator<Res, void> {
  const response = await client({
    url: options.url,
    method: "POST",
    header: requestHeaderWithCompression(true, undefined, undefined, ACCEPT_COMPRESSION, null),
    body,
    signal,
  });
  const { compression, foundStatus, headerError } = validateResponseWithCompression(
    ACCEPT_COMPRESSION,
    response.status,
    response.header,
  );
  if (headerError) throw headerError;
  const splitter = new MessageSplitter(options.readMaxBytes);
  for await (const chunk of response.body) {
    splitter.push(chunk);
    for (let message = splitter.next(); message !== undefined; message = splitter.next()) {
      let data = message.data;
      if (message.flags === COMPRESSED) {
        if (!compression) {
          throw new ConnectError("received compressed envelope, but do not know how to decompress", Code.Internal);
        }
        data = await compression.decompress(data, options.readMaxBytes);
      }
      yield options.parse(data);
    }
  }
  if (splitter.partial) throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  // A trailers-only response carried its status in the headers, checked above.
  if (!foundStatus) validateTrailer(response.trailer, response.header);
}
