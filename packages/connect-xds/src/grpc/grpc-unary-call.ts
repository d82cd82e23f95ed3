// A unary gRPC call straight on a backend's HTTP/2 session (docs/decisions.md#connect-xds-lean-unary-calls): what
// connect's gRPC transport does over connect-node's HTTP client for one request and one response, without their
// async-iterable pipelines, per-call serializers and abort-signal plumbing. Outcomes are connect's: the same request
// headers, the same validation of the response (connect's own validateResponseWithCompression / validateTrailer),
// the same errors and codes. grpc-unary-call.test.ts compares both on random scripted responses.
//
// One call: open a stream (the connection refuses at once when it is not READY: a not-sent error, as for connect),
// serialize (and compress) the request and end the stream with it, then on 'response' validate the headers, split
// 'data' into messages (decompressed and parsed in order, at most one), and on 'end' validate the trailers. The
// first failure wins (a stream error, a reset, the deadline, the caller's signal, a protocol error); it resets the
// stream if still open, with CANCEL for a CANCELED error and INTERNAL_ERROR otherwise, as connect-node does.
import * as http2 from "node:http2";
import type { DescMessage, DescMethodUnary, MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type UnaryResponse } from "@connectrpc/connect";
import { type Compression, getAbortSignalReason } from "@connectrpc/connect/protocol";
import { validateResponseWithCompression, validateTrailer } from "@connectrpc/connect/protocol-grpc";
import type { Http2Connection } from "../connections/connection.js";
import { clearLongTimer, type LongTimer, setLongTimeout } from "../shared/long-timer.js";
import { type Envelope, EnvelopeSplitter } from "./envelopes.js";
import { addTrailers, errorFromNode, errorFromResetCode, headersFromNode } from "./grpc-wire.js";
import type { MessageByteCounter } from "./message-bytes.js";

/** How one transport's calls are encoded (resolved once from the transport's options). */
export interface UnaryCallConfig {
  readonly acceptCompression: readonly Compression[];
  readonly sendCompression: Compression | null;
  readonly compressMinBytes: number;
  readonly readMaxBytes: number;
}

/** The per-method part: the path and connect's size-limited serializers for the transport's format. */
export interface MethodCodec {
  readonly path: string;
  serialize(message: unknown): Uint8Array;
  parse(data: Uint8Array): unknown;
}

const { NGHTTP2_CANCEL, NGHTTP2_INTERNAL_ERROR, NGHTTP2_FLAG_END_STREAM } = http2.constants;
const COMPRESSED = 1;

/** Node's error for a stream that closed before its end (what connect-node's body iterator fails with). */
function prematureClose(): Error {
  return Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" });
}

export class UnaryCall<O extends DescMessage> {
  readonly promise: Promise<UnaryResponse<DescMessage, O>>;
  private resolve!: (response: UnaryResponse<DescMessage, O>) => void;
  private reject!: (error: ConnectError) => void;
  private settled = false;
  private stream: http2.ClientHttp2Stream | undefined;
  private header: Headers | undefined;
  private trailer: Headers | undefined;
  private compression: Compression | null = null;
  private headerError: ConnectError | undefined;
  private message: MessageShape<O> | undefined;
  private ended = false;
  /** Set once a compressed message made body processing asynchronous: later chunks and the end queue behind it. */
  private queue: Promise<void> | undefined;
  private splitter: EnvelopeSplitter | undefined;
  private timer: LongTimer | undefined;
  private readonly onAbort: (() => void) | undefined;

  constructor(
    private readonly method: DescMethodUnary<DescMessage, O>,
    private readonly config: UnaryCallConfig,
    private readonly codec: MethodCodec,
    private readonly signal: AbortSignal | undefined,
    private readonly counter: MessageByteCounter | undefined,
  ) {
    this.promise = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    if (signal !== undefined) {
      this.onAbort = () => {
        const reason = getAbortSignalReason(signal);
        this.fail(ConnectError.from(reason, Code.Canceled), errorFromNode(reason).code);
      };
    }
  }

  /**
   * Sends `message` on `connection` (`headers` with `:method` and `:path`); a call whose signal is already aborted
   * fails without a stream.
   */
  start(
    connection: Http2Connection,
    headers: http2.OutgoingHttpHeaders,
    timeoutMs: number | undefined,
    message: unknown,
  ) {
    const signal = this.signal;
    if (signal !== undefined) {
      if (signal.aborted) {
        this.onAbort?.();
        return;
      }
      signal.addEventListener("abort", this.onAbort!);
    }
    if (timeoutMs !== undefined) {
      this.timer = setLongTimeout(() => {
        this.fail(new ConnectError("the operation timed out", Code.DeadlineExceeded));
      }, timeoutMs);
    }
    let stream: http2.ClientHttp2Stream;
    try {
      stream = connection.openStream(headers);
    } catch (reason) {
      this.fail(errorFromNode(reason));
      return;
    }
    this.send(stream, message);
  }

  private send(stream: http2.ClientHttp2Stream, message: unknown): void {
    this.stream = stream;
    // Each listener stays for the stream's life; a settled call ignores what comes after.
    stream.on("error", (error: Error) => this.fail(errorFromNode(error)));
    stream.on("close", () => this.onClose(stream.rstCode));
    stream.on("response", (raw, flags: number) => this.onResponse(raw, flags));
    stream.on("trailers", (raw) => {
      if (this.trailer !== undefined) addTrailers(this.trailer, raw);
    });
    stream.on("data", (chunk: Buffer) => this.onData(chunk));
    stream.on("end", () => this.onEnd());
    let data: Uint8Array;
    try {
      data = this.codec.serialize(message);
    } catch (error) {
      this.fail(errorFromNode(error));
      return;
    }
    const { sendCompression, compressMinBytes } = this.config;
    if (sendCompression !== null && data.byteLength >= compressMinBytes) {
      sendCompression.compress(data).then(
        (compressed) => this.write(stream, compressed, COMPRESSED),
        (error: unknown) => this.fail(errorFromNode(error)),
      );
    } else {
      this.write(stream, data, 0);
    }
  }

  private write(stream: http2.ClientHttp2Stream, data: Uint8Array, flags: number): void {
    if (this.settled) return;
    const length = data.byteLength;
    const counter = this.counter;
    if (counter !== undefined) {
      counter.sent = length;
      counter.onSent?.(length);
    }
    const frame = Buffer.allocUnsafe(length + 5);
    frame[0] = flags;
    frame.writeUInt32BE(length, 1);
    frame.set(data, 5);
    stream.end(frame);
  }

  private onResponse(raw: http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader, flags: number): void {
    if (this.settled) return;
    // A6: headers that leave the stream open commit the attempt; a Trailers-Only response ends it with them.
    if (this.counter !== undefined && (flags & NGHTTP2_FLAG_END_STREAM) === 0) this.counter.responseHeaders = true;
    const header = headersFromNode(raw);
    this.header = header;
    this.trailer = new Headers();
    try {
      const { compression, headerError } = validateResponseWithCompression(
        this.config.acceptCompression as Compression[],
        raw[":status"] ?? 0,
        header,
      );
      this.compression = compression ?? null;
      this.headerError = headerError;
    } catch (error) {
      this.fail(ConnectError.from(error));
      return;
    }
    const counter = this.counter;
    this.splitter = new EnvelopeSplitter(
      this.config.readMaxBytes,
      counter === undefined
        ? () => {}
        : (length) => {
            counter.received += length;
            counter.responseMessages++;
          },
    );
  }

  private onData(chunk: Buffer): void {
    if (this.settled) return;
    if (this.queue !== undefined) this.queue = this.queue.then(() => this.take(chunk));
    else this.queue = this.take(chunk);
  }

  /** Splits a chunk and handles its messages; a promise while a message is being decompressed. */
  private take(chunk: Uint8Array): Promise<void> | undefined {
    if (this.settled || this.splitter === undefined) return undefined;
    let envelopes: Envelope[];
    try {
      envelopes = this.splitter.split(chunk);
    } catch (error) {
      this.fail(ConnectError.from(error));
      return undefined;
    }
    return this.accept(envelopes, 0);
  }

  private accept(envelopes: Envelope[], from: number): Promise<void> | undefined {
    for (let i = from; i < envelopes.length && !this.settled; i++) {
      const { flags, data } = envelopes[i]!;
      if ((flags & COMPRESSED) === 0) {
        this.sink(data);
        continue;
      }
      const compression = this.compression;
      if (compression === null) {
        this.fail(new ConnectError("received compressed envelope, but do not know how to decompress", Code.Internal));
        return undefined;
      }
      return compression.decompress(data, this.config.readMaxBytes).then(
        (plain) => {
          if (this.settled) return undefined;
          this.sink(plain);
          return this.accept(envelopes, i + 1);
        },
        (error: unknown) => this.fail(ConnectError.from(error)),
      );
    }
    return undefined;
  }

  private sink(data: Uint8Array): void {
    try {
      const message = this.codec.parse(data) as MessageShape<O>;
      if (this.message !== undefined) {
        throw new ConnectError("protocol error: received extra output message for unary method", Code.Unimplemented);
      }
      this.message = message;
    } catch (error) {
      this.fail(ConnectError.from(error));
    }
  }

  private onEnd(): void {
    this.ended = true;
    // Without response headers the stream's close (or the connection's error) settles the call.
    if (this.settled || this.header === undefined) return;
    // In a microtask, as connect sees the end through promises: a reset that ended the body (CANCEL after the
    // headers) closes the stream within the same run of process.nextTick callbacks, which comes before microtasks,
    // and so fails the call first (test: "a message, then CANCEL").
    if (this.queue !== undefined) this.queue = this.queue.then(() => this.finish());
    else queueMicrotask(() => this.finish());
  }

  private onClose(rstCode: number): void {
    if (this.settled) return;
    const error = errorFromResetCode(rstCode);
    // A stream that closed without a reset code connect-node maps and without a finished body.
    if (error !== undefined) this.fail(error);
    else if (!this.ended || this.header === undefined) this.fail(ConnectError.from(prematureClose()));
  }

  /** The body ended: connect's checks of the trailers and of the single message, in connect's order. */
  private finish(): void {
    if (this.settled) return;
    const header = this.header!;
    const trailer = this.trailer!;
    try {
      if (this.splitter?.partial === true) {
        throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
      }
      validateTrailer(trailer, header);
      if (this.message === undefined) {
        // A trailers-only response carries its status in the headers.
        if (this.headerError !== undefined) throw this.headerError;
        throw new ConnectError(
          "protocol error: missing output message for unary method",
          trailer.has("grpc-status") ? Code.Unimplemented : Code.Unknown,
        );
      }
      if (this.headerError !== undefined) {
        throw new ConnectError(
          "protocol error: received output message for unary method with error status",
          Code.Unknown,
        );
      }
    } catch (error) {
      this.fail(ConnectError.from(error));
      return;
    }
    this.settle();
    const method = this.method;
    this.resolve({ stream: false, service: method.parent, method, header, message: this.message, trailer });
  }

  private settle(): void {
    this.settled = true;
    clearLongTimer(this.timer);
    if (this.onAbort !== undefined) this.signal?.removeEventListener("abort", this.onAbort);
  }

  /** Fails the call with `error`; an open stream is reset with the code connect-node sends for `resetFor`. */
  private fail(error: ConnectError, resetFor: Code = error.code): void {
    if (this.settled) return;
    this.settle();
    const stream = this.stream;
    if (stream !== undefined && !stream.closed)
      stream.close(resetFor === Code.Canceled ? NGHTTP2_CANCEL : NGHTTP2_INTERNAL_ERROR);
    this.reject(error);
  }
}
