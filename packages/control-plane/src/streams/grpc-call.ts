import * as http2 from "node:http2";
import * as zlib from "node:zlib";
import { Code } from "@connectrpc/connect";
import { parseTimeout } from "@connectrpc/connect/protocol-grpc";
import type { ScopedLogger } from "../logger.js";
import { clearLongTimer, type LongTimer, setLongTimeout } from "../long-timer.js";
import type { WireMessage } from "./encoded-response.js";
import { createFrameReader, FRAME_HEADER_BYTES, frameHeader, writeFrameHeader } from "./grpc-frames.js";

// The server side of one gRPC call on an HTTP/2 stream, written for the ADS methods so that a response can be sent
// as bytes shared by many streams (see encoded-response.ts) and so that the server sees its own write queue: what a
// stream has written that the connection has not taken yet (HTTP/2 flow control holds it when a client does not
// read). Framing and statuses follow the gRPC over HTTP/2 protocol.

/** What the call reports to the stream it carries. Each runs synchronously, in arrival order. */
export interface GrpcCallHandlers {
  /** A whole request message, decompressed. */
  message(bytes: Uint8Array): void;
  /** The client half-closed after whole messages. */
  halfClose(): void;
  /** The client went away: it reset the stream or the connection closed. */
  cancel(): void;
  /** The request stream cannot be read on (a frame too large, a truncated or undecodable message). */
  refuse(code: number, message: string): void;
  /** The call's `grpc-timeout` elapsed: it ends with DEADLINE_EXCEEDED (`message`). */
  deadlineExceeded(message: string): void;
}

export interface GrpcServerCall {
  /** `address:port` of the client. */
  readonly peer: string | undefined;
  /** Bytes written that the connection has not taken yet. */
  readonly queuedBytes: number;
  start(handlers: GrpcCallHandlers): void;
  /**
   * Writes one message (its `framed` buffer as is when it has one); `onFlushed` runs once the connection has
   * taken it.
   */
  write(message: WireMessage, onFlushed: () => void): void;
  /**
   * Ends the call: with a status (0 = OK, after what was written), or, with `code` undefined, by resetting the
   * stream (the client is gone or its connection is being cut). The HTTP/2 stream is closed either way, also when
   * the client has not finished sending. `stuck`: the client does not read, so a status would wait behind what it
   * does not take; the stream is reset at once, RESOURCE_EXHAUSTED as ENHANCE_YOUR_CALM (which gRPC clients read as
   * RESOURCE_EXHAUSTED).
   */
  end(code: number | undefined, message: string, stuck?: boolean): void;
}

export interface GrpcCallOptions {
  readonly maxRequestBytes: number;
  readonly logger: ScopedLogger;
}

const ACCEPTED_ENCODINGS = "identity,deflate,gzip";

/**
 * A message up to this size is copied, with its frame header, into one buffer and written in one write: a corked
 * run of writes costs the stream more than the copy (an incremental push to many streams is mostly such writes).
 * Larger ones (a full state) are written part by part, their shared bytes never copied per stream.
 */
const COPIED_MESSAGE_BYTES = 16 * 1024;

/** The frame header and `parts` (`size` bytes) in one buffer. */
function framed(parts: readonly Uint8Array[], size: number): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEADER_BYTES + size);
  writeFrameHeader(out, size);
  let at = FRAME_HEADER_BYTES;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  // `size` is the parts' total; were it more, the buffer would send uninitialised memory.
  if (at !== out.length) throw new Error(`framed ${at - FRAME_HEADER_BYTES} of ${size} bytes`);
  return out;
}

/**
 * Checks that a request is a gRPC call this server can read (POST, `application/grpc[+proto]`, a known
 * `grpc-encoding`, a well-formed `grpc-timeout`) and returns it as a call; otherwise answers it (HTTP 415 or a gRPC
 * status) and returns undefined.
 */
export function openGrpcCall(
  req: http2.Http2ServerRequest,
  res: http2.Http2ServerResponse,
  options: GrpcCallOptions,
): GrpcServerCall | undefined {
  const contentType = req.headers["content-type"] ?? "";
  if (req.method !== "POST" || !/^application\/grpc(\+proto)?(;|$)/.test(contentType)) {
    res.writeHead(415, { "content-type": "text/plain" });
    res.end(`expected a gRPC request (POST, content-type application/grpc), got ${req.method} ${contentType}`);
    return undefined;
  }
  const encoding = req.headers["grpc-encoding"] ?? "identity";
  if (encoding !== "identity" && encoding !== "gzip" && encoding !== "deflate") {
    res.setHeader("grpc-accept-encoding", ACCEPTED_ENCODINGS);
    refuseCall(res, Code.Unimplemented, `grpc-encoding ${encoding} is not supported`);
    return undefined;
  }
  // Read as Connect reads it for the server's other services (one to eight digits and a unit; a malformed value is
  // INVALID_ARGUMENT), so that every method of the server answers alike. The longest, 99,999,999 hours, is past
  // Node's timer limit: the deadline is kept with a long timer (docs/decisions.md#long-timers).
  const header = req.headers["grpc-timeout"];
  const timeout = Array.isArray(header) ? header.join(", ") : header;
  let deadline: { readonly text: string; readonly ms: number } | undefined;
  if (timeout !== undefined) {
    const parsed = parseTimeout(timeout, Number.POSITIVE_INFINITY);
    if (parsed.error !== undefined || parsed.timeoutMs === undefined) {
      refuseCall(res, Code.InvalidArgument, `malformed grpc-timeout "${timeout}"`);
      return undefined;
    }
    deadline = { text: timeout, ms: parsed.timeoutMs };
  }
  return createCall(req, res, encoding, deadline, options);
}

function createCall(
  req: http2.Http2ServerRequest,
  res: http2.Http2ServerResponse,
  encoding: "identity" | "gzip" | "deflate",
  timeout: { readonly text: string; readonly ms: number } | undefined,
  options: GrpcCallOptions,
): GrpcServerCall {
  const stream = res.stream;
  const socket = req.socket;
  const peer = socket?.remoteAddress !== undefined ? `${socket.remoteAddress}:${String(socket.remotePort)}` : undefined;
  const reader = createFrameReader(options.maxRequestBytes);
  let handlers: GrpcCallHandlers | undefined;
  let queuedBytes = 0;
  let ended = false;
  let clientDone = false;
  /** Runs from the request's arrival (`grpc-timeout` is relative to it) until the call ends. */
  let deadline: LongTimer | undefined;

  const decompress = (bytes: Uint8Array): Uint8Array | undefined => {
    const limit = { maxOutputLength: options.maxRequestBytes };
    try {
      return encoding === "gzip" ? zlib.gunzipSync(bytes, limit) : zlib.inflateSync(bytes, limit);
    } catch (error) {
      if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
        handlers?.refuse(
          Code.ResourceExhausted,
          `a decompressed request exceeds maxRequestBytes (${options.maxRequestBytes} bytes)`,
        );
      } else {
        handlers?.refuse(
          Code.InvalidArgument,
          `cannot decompress a ${encoding} request: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      return undefined;
    }
  };

  const onData = (chunk: Buffer): void => {
    for (const frame of reader.push(chunk)) {
      if (ended || !handlers) return;
      if (frame.kind === "too-large") {
        handlers.refuse(
          Code.ResourceExhausted,
          `a request of ${frame.length} bytes exceeds maxRequestBytes (${options.maxRequestBytes} bytes)`,
        );
      } else if (frame.kind === "bad-flag") {
        handlers.refuse(Code.InvalidArgument, `invalid gRPC message flag ${frame.flag}`);
      } else if (!frame.compressed) {
        handlers.message(frame.bytes);
      } else if (encoding === "identity") {
        handlers.refuse(Code.Internal, "a compressed message on a call without grpc-encoding");
      } else {
        const bytes = decompress(frame.bytes);
        if (bytes) handlers.message(bytes);
      }
    }
  };

  /** Closes the HTTP/2 stream once the status is on its way, if the client is still sending. */
  const closeAfterStatus = (code: number): void => {
    if (!clientDone && !stream.closed && !stream.destroyed) stream.close(resetCodeAfterStatus(code));
  };

  return {
    peer,
    get queuedBytes() {
      return queuedBytes;
    },
    start(h) {
      handlers = h;
      if (timeout !== undefined) {
        deadline = setLongTimeout(() => {
          if (!ended) h.deadlineExceeded(`deadline exceeded: the call's grpc-timeout (${timeout.text}) elapsed`);
        }, timeout.ms);
        // An unreferenced timer: an open call keeps the server's socket, not the process, alive.
        deadline.unref();
      }
      req.on("data", onData);
      // The request also ends when the stream is reset or its connection goes away; a client cancelling right
      // after half-closing sends both at once: look a turn later.
      req.once("end", () =>
        setImmediate(() => {
          clientDone = true;
          if (ended) return;
          if (stream.closed || stream.aborted || stream.destroyed) h.cancel();
          else if (reader.partialBytes > 0) h.refuse(Code.InvalidArgument, "the request stream ended inside a message");
          else h.halfClose();
        }),
      );
      stream.once("close", () => {
        clearLongTimer(deadline);
        if (!ended) h.cancel();
      });
      stream.on("error", (error) => options.logger.trace("HTTP/2 stream error", error));
    },
    write({ parts, size, framed: framedMessage }, onFlushed) {
      if (ended || stream.destroyed || stream.closed) return;
      if (!res.headersSent) {
        res.writeHead(200, { "content-type": "application/grpc", "grpc-accept-encoding": ACCEPTED_ENCODINGS });
      }
      queuedBytes += 5 + size;
      const flushed = (): void => {
        queuedBytes -= 5 + size;
        onFlushed();
      };
      if (framedMessage) {
        // Its length is what the header says: FRAME_HEADER_BYTES + size (encoded-response.test.ts).
        stream.write(framedMessage, flushed);
        return;
      }
      if (size <= COPIED_MESSAGE_BYTES) {
        stream.write(framed(parts, size), flushed);
        return;
      }
      stream.cork();
      stream.write(frameHeader(size), parts.length === 0 ? flushed : undefined);
      parts.forEach((part, i) => {
        stream.write(part, i === parts.length - 1 ? flushed : undefined);
      });
      stream.uncork();
    },
    end(code, message, stuck = false) {
      if (ended) return;
      ended = true;
      clearLongTimer(deadline);
      req.off("data", onData);
      if (stream.destroyed || stream.closed) return;
      if (code === undefined) {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        return;
      }
      if (!res.headersSent) {
        endTrailersOnly(res, code, message);
        closeAfterStatus(code);
        return;
      }
      if (stuck) {
        stream.close(
          code === Code.ResourceExhausted ? http2.constants.NGHTTP2_ENHANCE_YOUR_CALM : http2.constants.NGHTTP2_CANCEL,
        );
        return;
      }
      res.addTrailers(statusHeaders(code, message));
      // The trailers go out after the written messages; the stream is reset only once they are queued.
      stream.once("wantTrailers", () => setImmediate(() => closeAfterStatus(code)));
      res.end();
    },
  };
}

/** `grpc-status`, and `grpc-message` for an error (an OK carries none). */
function statusHeaders(code: number, message: string): Record<string, string> {
  return code === 0 || message === ""
    ? { "grpc-status": String(code) }
    : { "grpc-status": String(code), "grpc-message": percentEncode(message) };
}

/** A status without messages: one HEADERS frame that ends the stream. */
function endTrailersOnly(res: http2.Http2ServerResponse, code: number, message: string): void {
  res.setHeader("content-type", "application/grpc");
  for (const [name, value] of Object.entries(statusHeaders(code, message))) res.setHeader(name, value);
  res.end();
}

/** Answers a call with a status before reading it, and closes the HTTP/2 stream (the client may still be sending). */
export function refuseCall(res: http2.Http2ServerResponse, code: number, message: string): void {
  endTrailersOnly(res, code, message);
  if (!res.stream.closed && !res.stream.destroyed) res.stream.close(resetCodeAfterStatus(code));
}

/**
 * The RST_STREAM that follows a status sent while the client is still sending (HTTP/2 lets a server that answered
 * ask the client to stop so). NO_ERROR, except after RESOURCE_EXHAUSTED: ENHANCE_YOUR_CALM, the code gRPC maps to
 * RESOURCE_EXHAUSTED. A client still writing a message over the limit may have so much queued that it cannot take
 * the status in (Node's HTTP/2 client refuses incoming headers past `maxSessionMemory`); after NO_ERROR it would
 * wait for an end that never comes, after ENHANCE_YOUR_CALM it ends the call at once (docs/limits-control-plane.md).
 */
export function resetCodeAfterStatus(code: number): number {
  return code === Code.ResourceExhausted ? http2.constants.NGHTTP2_ENHANCE_YOUR_CALM : http2.constants.NGHTTP2_NO_ERROR;
}

/** `grpc-message` is percent-encoded UTF-8: everything outside printable ASCII, and `%` itself. */
export function percentEncode(message: string): string {
  let out = "";
  for (const byte of Buffer.from(message, "utf8")) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}
