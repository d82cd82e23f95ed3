// A server-streaming gRPC call straight on a backend's HTTP/2 session (docs/decisions.md#connect-xds-lean-server-
// streams): what connect's gRPC transport does for a request and a stream of responses, without its async-iterable
// pipeline (a generator per stage and per message). Outcomes are connect's: the same request headers and body, the
// same validation of the response headers and trailers (connect's validateResponseWithCompression / validateTrailer),
// the same messages, errors and codes. grpc-server-stream.test.ts compares both on random scripted responses.
//
// One call: open a stream (the connection refuses at once when it is not READY: a not-sent error, as for connect),
// write the request messages as the caller's iterable gives them (serialized, compressed as configured, framed) and
// end the stream; on 'response' validate the headers and resolve the response, whose messages come from 'data'
// (split, decompressed and parsed in order) through a queue the caller's iterator reads; on 'end' validate the
// trailers. The first failure wins (a stream error, a reset, the deadline, the caller's signal, a protocol error):
// before the response it rejects the response, after it the iterator throws it once the messages before it were
// read. It resets the stream if still open, with CANCEL for a CANCELED error and INTERNAL_ERROR otherwise, as
// connect-node does. A caller that stops reading (the iterator's `return`) resets the stream with CANCEL.
import * as http2 from "node:http2";
import { create, type DescMessage, type DescMethodStreaming, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type StreamResponse } from "@connectrpc/connect";
import { type Compression, getAbortSignalReason } from "@connectrpc/connect/protocol";
import { validateResponseWithCompression, validateTrailer } from "@connectrpc/connect/protocol-grpc";
import type { Http2Connection } from "../connections/connection.js";
import { clearLongTimer, type LongTimer, setLongTimeout } from "../shared/long-timer.js";
import { type Envelope, EnvelopeSplitter } from "./envelopes.js";
import type { MethodCodec, UnaryCallConfig } from "./grpc-unary-call.js";
import { addTrailers, errorFromNode, errorFromResetCode, headersFromNode } from "./grpc-wire.js";
import type { MessageByteCounter } from "./message-bytes.js";

const { NGHTTP2_CANCEL, NGHTTP2_INTERNAL_ERROR } = http2.constants;
const COMPRESSED = 1;
const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/** Node's error for a stream that closed before its end (what connect-node's body iterator fails with). */
function prematureClose(): Error {
  return Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" });
}

export class ServerStreamCall<O extends DescMessage> {
  readonly response: Promise<StreamResponse<DescMessage, O>>;
  private resolve!: (response: StreamResponse<DescMessage, O>) => void;
  private reject!: (error: ConnectError) => void;
  /** The call has its outcome: an error, or the end of its messages (checked). No event changes it any more. */
  private settled = false;
  private responded = false;
  private stream: http2.ClientHttp2Stream | undefined;
  private header: Headers | undefined;
  private readonly trailer = new Headers();
  private compression: Compression | null = null;
  private foundStatus = false;
  private ended = false;
  /** Parsed messages the caller has not read yet. */
  private readonly messages: MessageShape<O>[] = [];
  private head = 0;
  /** What the caller reads after the messages: the end, or the error. */
  private outcome: ConnectError | "done" | undefined;
  /** A caller waiting for the next message. */
  private waiter: { resolve: (r: IteratorResult<MessageShape<O>>) => void; reject: (e: unknown) => void } | undefined;
  /** Set once a compressed message made body processing asynchronous: later chunks and the end queue behind it. */
  private queue: Promise<void> | undefined;
  private splitter: EnvelopeSplitter | undefined;
  private timer: LongTimer | undefined;
  private readonly onAbort: (() => void) | undefined;

  constructor(
    private readonly method: DescMethodStreaming<DescMessage, O>,
    private readonly config: UnaryCallConfig,
    private readonly codec: MethodCodec,
    private readonly signal: AbortSignal | undefined,
    private readonly counter: MessageByteCounter | undefined,
  ) {
    this.response = new Promise((resolve, reject) => {
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
   * Opens the stream on `connection` (`headers` with `:method` and `:path`), then sends `input`'s messages; a call
   * whose signal is already aborted fails without a stream.
   */
  start(
    connection: Http2Connection,
    headers: http2.OutgoingHttpHeaders,
    timeoutMs: number | undefined,
    input: AsyncIterable<unknown>,
  ): void {
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
    this.stream = stream;
    // Each listener stays for the stream's life; a settled call ignores what comes after.
    stream.on("error", (error: Error) => this.fail(errorFromNode(error)));
    stream.on("close", () => this.onClose(stream.rstCode));
    stream.on("response", (raw) => this.onResponse(raw));
    stream.on("trailers", (raw) => addTrailers(this.trailer, raw));
    stream.on("data", (chunk: Buffer) => this.onData(chunk));
    stream.on("end", () => this.onEnd());
    this.send(stream, input).catch((error: unknown) => this.fail(errorFromNode(error)));
  }

  /** Writes each request message as the iterable gives it, then ends the request. */
  private async send(stream: http2.ClientHttp2Stream, input: AsyncIterable<unknown>): Promise<void> {
    const { sendCompression, compressMinBytes } = this.config;
    let sent = 0;
    for await (const init of input) {
      if (this.settled || stream.closed) return;
      let data = this.codec.serialize(create(this.method.input, init as never));
      let flags = 0;
      if (sendCompression !== null && data.byteLength >= compressMinBytes) {
        data = await sendCompression.compress(data);
        flags = COMPRESSED;
        if (this.settled || stream.closed) return;
      }
      sent += data.byteLength;
      const counter = this.counter;
      if (counter !== undefined) {
        counter.sent = sent;
        counter.onSent?.(sent);
      }
      const frame = Buffer.allocUnsafe(data.byteLength + 5);
      frame[0] = flags;
      frame.writeUInt32BE(data.byteLength, 1);
      frame.set(data, 5);
      stream.write(frame);
    }
    if (!this.settled && !stream.closed) stream.end();
  }

  private onResponse(raw: http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader): void {
    if (this.settled) return;
    const header = headersFromNode(raw);
    this.header = header;
    try {
      const { compression, foundStatus, headerError } = validateResponseWithCompression(
        this.config.acceptCompression as Compression[],
        raw[":status"] ?? 0,
        header,
      );
      if (headerError !== undefined) throw headerError;
      this.compression = compression ?? null;
      this.foundStatus = foundStatus;
    } catch (error) {
      this.fail(ConnectError.from(error));
      return;
    }
    const counter = this.counter;
    // A6: headers without a status (not Trailers-Only) commit the attempt.
    if (counter !== undefined && !this.foundStatus) counter.responseHeaders = true;
    this.splitter = new EnvelopeSplitter(
      this.config.readMaxBytes,
      counter === undefined
        ? () => {}
        : (length) => {
            counter.received += length;
            counter.responseMessages++;
          },
    );
    this.responded = true;
    const method = this.method;
    this.resolve({
      stream: true,
      service: method.parent,
      method,
      header,
      trailer: this.trailer,
      message: { [Symbol.asyncIterator]: () => this.iterator() },
    });
  }

  private iterator(): AsyncIterator<MessageShape<O>> {
    return {
      next: () => this.next(),
      return: () => {
        // The caller stopped reading: the stream goes (CANCEL), what was queued with it.
        this.cancelReading();
        return Promise.resolve(DONE);
      },
    };
  }

  private next(): Promise<IteratorResult<MessageShape<O>>> {
    if (this.head < this.messages.length) {
      const value = this.messages[this.head++]!;
      if (this.head === this.messages.length) {
        this.messages.length = 0;
        this.head = 0;
      }
      return Promise.resolve({ done: false, value });
    }
    const outcome = this.outcome;
    if (outcome !== undefined) {
      // An error is read once; after it, as after the end, the iterator is done.
      this.outcome = "done";
      return outcome === "done" ? Promise.resolve(DONE) : Promise.reject(outcome);
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** A parsed message: to the waiting reader, else queued. */
  private push(message: MessageShape<O>): void {
    const waiter = this.waiter;
    if (waiter !== undefined) {
      this.waiter = undefined;
      waiter.resolve({ done: false, value: message });
    } else {
      this.messages.push(message);
    }
  }

  /** The end of the messages, or their error: to the waiting reader (nothing is queued then), else kept. */
  private finishWith(outcome: ConnectError | "done"): void {
    const waiter = this.waiter;
    if (waiter === undefined) {
      this.outcome = outcome;
      return;
    }
    this.waiter = undefined;
    this.outcome = "done";
    if (outcome === "done") waiter.resolve(DONE);
    else waiter.reject(outcome);
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
    let message: MessageShape<O>;
    try {
      message = this.codec.parse(data) as MessageShape<O>;
    } catch (error) {
      this.fail(ConnectError.from(error));
      return;
    }
    this.push(message);
  }

  private onEnd(): void {
    this.ended = true;
    // Without response headers the stream's close (or the connection's error) settles the call.
    if (this.settled || this.header === undefined) return;
    // In a microtask, as connect sees the end through promises: a reset that ended the body closes the stream
    // within the same run of process.nextTick callbacks, which comes before microtasks, and so fails the call first.
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

  /** The body ended: connect's checks (an unfinished message, then the trailers unless the headers had the status). */
  private finish(): void {
    if (this.settled) return;
    try {
      if (this.splitter?.partial === true) {
        throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
      }
      if (!this.foundStatus) validateTrailer(this.trailer, this.header!);
    } catch (error) {
      this.fail(ConnectError.from(error));
      return;
    }
    this.settle();
    this.finishWith("done");
  }

  private settle(): void {
    this.settled = true;
    clearLongTimer(this.timer);
    if (this.onAbort !== undefined) this.signal?.removeEventListener("abort", this.onAbort);
  }

  /** The caller stopped reading before the end: the call is over, its stream reset with CANCEL. */
  private cancelReading(): void {
    this.messages.length = 0;
    this.head = 0;
    this.outcome = "done";
    if (this.settled) return;
    this.settle();
    const stream = this.stream;
    if (stream !== undefined && !stream.closed) stream.close(NGHTTP2_CANCEL);
  }

  /**
   * Fails the call with `error`; an open stream is reset with the code connect-node sends for `resetFor`. After the
   * response, the caller reads the error once it has read the messages that came before it.
   */
  private fail(error: ConnectError, resetFor: Code = error.code): void {
    if (this.settled) return;
    this.settle();
    const stream = this.stream;
    if (stream !== undefined && !stream.closed)
      stream.close(resetFor === Code.Canceled ? NGHTTP2_CANCEL : NGHTTP2_INTERNAL_ERROR);
    if (this.responded) this.finishWith(error);
    else this.reject(error);
  }
}
