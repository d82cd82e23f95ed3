// The Connect transport of one connection: connect-node's gRPC protocol code over our session (connection.ts), and,
// when per-call metrics are on, a count of the compressed message bytes each way (A66: gRPC framing excluded).
import type { Transport } from "@connectrpc/connect";
import {
  type UniversalClientFn,
  type UniversalClientRequest,
  validateReadWriteMaxBytes,
} from "@connectrpc/connect/protocol";
import { createTransport } from "@connectrpc/connect/protocol-grpc";
import { compressionBrotli, compressionGzip, createNodeHttpClient } from "@connectrpc/connect-node";
import type { SessionManager } from "./connection.js";
import type { EndpointTransportOptions } from "./transport-options.js";

export type { EndpointTransportOptions };

/** Compressed message bytes of one attempt, gRPC's 5-byte message prefixes excluded. */
export class MessageByteCounter {
  sent = 0;
  received = 0;
  /** Called as request bytes are counted, with the total so far (the retry buffer reserves them). */
  onSent: ((total: number) => void) | undefined = undefined;
}

/**
 * The counter of the attempt being started. connect's gRPC transport calls its HTTP client synchronously inside
 * `unary()` / `stream()` when it has no interceptors (ours never has), so the call path sets this right before and
 * the HTTP client takes it; `test/metrics.test.ts` fails if a connect release changes that.
 */
let handoff: MessageByteCounter | undefined;

/** Runs `start` (which starts one call on an endpoint transport) with `counter` counting its bytes. */
export function countingBytes<T>(counter: MessageByteCounter, start: () => T): T {
  handoff = counter;
  try {
    return start();
  } finally {
    handoff = undefined;
  }
}

/** Adds the message bytes of gRPC length-prefixed messages in a byte stream, whatever the chunking. */
class EnvelopeReader {
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

function counted(body: AsyncIterable<Uint8Array>, onTotal: (total: number) => void): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]() {
      const inner = body[Symbol.asyncIterator]();
      const reader = new EnvelopeReader();
      return {
        next: () =>
          inner.next().then((result) => {
            if (result.done !== true) {
              reader.read(result.value);
              onTotal(reader.total);
            }
            return result;
          }),
        return: (value?: unknown) => inner.return?.(value) ?? Promise.resolve({ done: true, value: undefined }),
        throw: (error?: unknown) => inner.throw?.(error) ?? Promise.reject(error),
      } as AsyncIterator<Uint8Array>;
    },
  };
}

function countingClient(base: UniversalClientFn): UniversalClientFn {
  return (req: UniversalClientRequest) => {
    const counter = handoff;
    handoff = undefined;
    if (counter === undefined) return base(req);
    const body =
      req.body === undefined
        ? undefined
        : counted(req.body, (total) => {
            counter.sent = total;
            counter.onSent?.(total);
          });
    return base(body === undefined ? req : { ...req, body }).then((res) => ({
      ...res,
      body: counted(res.body, (total) => {
        counter.received = total;
      }),
    }));
  };
}

/** A Connect gRPC transport whose calls go to `session` (one backend connection). */
export function createEndpointTransport(session: SessionManager, options: EndpointTransportOptions): Transport {
  const base = createNodeHttpClient({ httpVersion: "2", sessionProvider: () => session });
  return createTransport({
    httpClient: countingClient(base),
    baseUrl: session.authority,
    useBinaryFormat: options.useBinaryFormat ?? true,
    interceptors: [],
    acceptCompression: options.acceptCompression ?? [compressionGzip, compressionBrotli],
    sendCompression: options.sendCompression ?? null,
    ...validateReadWriteMaxBytes(options.readMaxBytes, options.writeMaxBytes, options.compressMinBytes),
    ...(options.jsonOptions === undefined ? {} : { jsonOptions: options.jsonOptions }),
    ...(options.binaryOptions === undefined ? {} : { binaryOptions: options.binaryOptions }),
  });
}
