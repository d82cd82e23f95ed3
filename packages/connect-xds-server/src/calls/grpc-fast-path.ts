// The lean path for unary and server-streaming gRPC calls (docs/decisions.md#lean-grpc-server-path): the
// application's implementation called straight from the HTTP/2 stream, without Node's compatibility request and
// response objects, Connect's node adapter and its async-iterable pipeline, which together cost several times what
// the call itself does. It answers exactly as Connect's gRPC handler behind connectNodeAdapter does (the same
// headers, messages, trailers and status), using Connect's own pieces for what decides them (timeout parsing,
// compression negotiation, serialization limits, trailer status). It takes only the calls whose every step it knows:
// - from the headers alone: POST, content type `application/grpc` or `application/grpc+proto`, no `grpc-encoding`
//   other than `identity`, a valid `grpc-timeout` (or none), an authority that makes a URL, no `expect`, and a path
//   (without query) whose method is unary or server-streaming and was registered without options; the server's
//   options with gRPC on, no interceptors and no shutdown signal;
// - then the body must be exactly one uncompressed message within `readMaxBytes` that parses. Anything else (no
//   message, two, a compressed flag, a truncated envelope, a parse error) goes to Connect's own handler for the
//   method with the bytes already read and the rest of the stream (universal-fallback.ts), so it fails as it would
//   on the slow path.
import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import { create, isMessage } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouterOptions, type MethodImplSpec } from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { compressedFlag, compressionNegotiate, createMethodSerializationLookup } from "@connectrpc/connect/protocol";
import { parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import type { CapturedMethods } from "./captured-routes.js";
import { createLeanContext, type LeanContext } from "./lean-context.js";
import { nodeHeadersOf, resetError, runUniversal } from "./universal-fallback.js";

/** Takes a call onto the lean path, or returns false (nothing read, nothing written: the slow path takes it). */
export type GrpcFastPath = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => boolean;

interface FastMethod {
  readonly spec: MethodImplSpec;
  readonly serialization: ReturnType<typeof createMethodSerializationLookup>;
  /** Connect's handler for the path: the fallback for a body the lean path does not take. */
  handler: UniversalHandler | undefined;
}

/** The authorities that make a URL, per scheme; bounded (a client may send any authority). */
const AUTHORITY_MEMO_SIZE = 64;

export interface GrpcFastPathOptions {
  readonly methods: CapturedMethods;
  /** The handlers Connect made for the same routes, for the fallback. */
  readonly handlers: () => readonly UniversalHandler[];
  readonly connectOptions: ConnectRouterOptions | undefined;
}

/** The lean path, or undefined when the server's options rule it out for every call. */
export function createGrpcFastPath(options: GrpcFastPathOptions): GrpcFastPath | undefined {
  const opts = options.connectOptions ?? {};
  if (opts.grpc === false || (opts.interceptors?.length ?? 0) > 0 || opts.shutdownSignal !== undefined)
    return undefined;
  const acceptCompression = opts.acceptCompression ?? [compressionGzip, compressionBrotli];
  const readMaxBytes = opts.readMaxBytes ?? 0xffffffff;
  const writeMaxBytes = opts.writeMaxBytes ?? 0xffffffff;
  const compressMinBytes = opts.compressMinBytes ?? 1024;
  const maxTimeoutMs = opts.maxTimeoutMs ?? Number.MAX_SAFE_INTEGER;
  const byPath = new Map<string, FastMethod>();
  for (const [path, spec] of options.methods) {
    if (spec === undefined || (spec.kind !== "unary" && spec.kind !== "server_streaming")) continue;
    byPath.set(path, {
      spec,
      serialization: createMethodSerializationLookup(spec.method, opts.binaryOptions, opts.jsonOptions, {
        readMaxBytes,
        writeMaxBytes,
      }),
      handler: undefined,
    });
  }
  if (byPath.size === 0) return undefined;
  let handlersBound = false;
  const bindHandlers = () => {
    if (handlersBound) return;
    handlersBound = true;
    for (const handler of options.handlers()) {
      const method = byPath.get(handler.requestPath);
      if (method !== undefined) method.handler = handler;
    }
  };
  const goodBases = new Map<string, boolean>();
  const urlBaseOk = (base: string): boolean => {
    let ok = goodBases.get(base);
    if (ok === undefined) {
      ok = URL.canParse("/", base);
      if (goodBases.size >= AUTHORITY_MEMO_SIZE) goodBases.clear();
      goodBases.set(base, ok);
    }
    return ok;
  };

  return (stream, headers) => {
    if (headers[":method"] !== "POST") return false;
    const contentType = headers["content-type"];
    if (contentType !== "application/grpc" && contentType !== "application/grpc+proto") return false;
    const path = headers[":path"];
    const method = path === undefined ? undefined : byPath.get(path);
    if (method === undefined || headers.expect !== undefined) return false;
    const encoding = headers["grpc-encoding"];
    if (encoding !== undefined && encoding !== "identity") return false;
    const authority = headers[":authority"] ?? headers.host;
    if (authority === undefined) return false;
    const urlBase = `${isEncrypted(stream) ? "https" : "http"}://${authority}`;
    if (!urlBaseOk(urlBase)) return false;
    const timeout = parseTimeout(headerText(headers["grpc-timeout"]), maxTimeoutMs);
    if (timeout.error !== undefined) return false;
    const accept = headerText(headers["grpc-accept-encoding"]);
    const compression = compressionNegotiate(acceptCompression, null, accept, "grpc-accept-encoding").response;
    bindHandlers();
    const context = createLeanContext({
      spec: method.spec,
      headers,
      timeoutMs: timeout.timeoutMs,
      urlBase,
      path: path!,
      responseHeaderInit:
        compression === null
          ? RESPONSE_HEADER_INIT
          : { "content-type": "application/grpc+proto", "grpc-encoding": compression.name },
    });
    readSingleMessage(stream, readMaxBytes, (message, chunks, ended) => {
      if (message === undefined) {
        context.finish();
        fallback(stream, headers, method, chunks, ended, path!, urlBase);
        return;
      }
      let input: unknown;
      try {
        input = method.serialization.getI(true).parse(message);
      } catch {
        context.finish();
        fallback(stream, headers, method, chunks, true, path!, urlBase);
        return;
      }
      void invoke(stream, method, context, input, compression, compressMinBytes);
    });
    stream.once("close", () => {
      const error = resetError(stream.rstCode);
      context.cancel(error);
    });
    return true;
  };
}

const RESPONSE_HEADER_INIT: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "application/grpc+proto",
});

/** The response headers when the implementation did not touch them (a new object: Node may keep it). */
function defaultResponseHeaders(compression: { readonly name: string } | null): Record<string, string | number> {
  return compression === null
    ? { ":status": 200, "content-type": "application/grpc+proto" }
    : { ":status": 200, "content-type": "application/grpc+proto", "grpc-encoding": compression.name };
}

function headerText(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return typeof value === "string" ? value : value.join(", ");
}

function isEncrypted(stream: ServerHttp2Stream): boolean {
  const socket = stream.session?.socket as { encrypted?: boolean } | undefined;
  return socket?.encrypted === true;
}

/**
 * Reads the request body. `done(message, chunks)`: the one message's bytes when the body is exactly one
 * uncompressed envelope within `readMaxBytes`; else undefined (then `chunks` holds what was read, and the stream is
 * paused with the rest unread, unless it ended).
 */
function readSingleMessage(
  stream: ServerHttp2Stream,
  readMaxBytes: number,
  done: (message: Uint8Array | undefined, chunks: Buffer[], ended: boolean) => void,
): void {
  const chunks: Buffer[] = [];
  let length = 0;
  /** The envelope's total size once its prefix is read; -1 before. */
  let expected = -1;
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    length += chunk.length;
    if (expected < 0 && length >= 5) {
      const head = chunks.length === 1 ? chunk : Buffer.concat(chunks);
      const size = head.readUInt32BE(1);
      if (head[0] !== 0 || size > readMaxBytes) return giveUp();
      expected = 5 + size;
    }
    if (expected >= 0 && length > expected) giveUp();
  };
  const onEnd = () => {
    stream.off("data", onData);
    if (expected < 0 || length !== expected) {
      done(undefined, chunks, true);
      return;
    }
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
    done(body.subarray(5), chunks, true);
  };
  function giveUp(): void {
    stream.off("data", onData);
    stream.off("end", onEnd);
    stream.pause();
    done(undefined, chunks, false);
  }
  stream.on("data", onData);
  stream.once("end", onEnd);
}

function fallback(
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  method: FastMethod,
  chunks: Buffer[],
  ended: boolean,
  path: string,
  urlBase: string,
): void {
  if (method.handler === undefined) {
    // Connect made no handler for a path it was given: not reachable, but never a hung call.
    stream.close();
    return;
  }
  runUniversal({
    stream,
    headers,
    handler: method.handler,
    read: chunks,
    ended,
    url: new URL(path, urlBase).toString(),
  });
}

/** Until `stream` can take more (or closed). */
function drained(stream: ServerHttp2Stream): Promise<void> {
  if (stream.destroyed || stream.closed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stream.off("drain", done);
      stream.off("close", done);
      resolve();
    };
    stream.on("drain", done);
    stream.on("close", done);
  });
}

/**
 * Runs the implementation and writes its answer as Connect's gRPC handler does: the headers with the first message
 * (or at the end when there is none), each message enveloped (compressed past `compressMinBytes` when a compression
 * was negotiated), then the trailers with the status. A server-streaming call whose client goes away stops reading
 * its messages (the iterator is returned) and writes nothing more.
 */
async function invoke(
  stream: ServerHttp2Stream,
  method: FastMethod,
  context: LeanContext,
  input: unknown,
  compression: ReturnType<typeof compressionNegotiate>["response"],
  compressMinBytes: number,
): Promise<void> {
  const spec = method.spec as MethodImplSpec & { impl: (input: unknown, context: unknown) => unknown };
  const schema = spec.method.output;
  const serialization = method.serialization.getO(true);
  const encode = async (output: unknown): Promise<Buffer> => {
    const message = isMessage(output, schema) ? output : create(schema, output as never);
    let data = serialization.serialize(message);
    let flags = 0;
    if (compression !== null && data.byteLength >= compressMinBytes) {
      data = await compression.compress(data);
      flags = compressedFlag;
    }
    return frame(flags, data);
  };
  const respond = () => {
    if (stream.headersSent) return;
    const header = context.touchedResponseHeader;
    stream.respond(header === undefined ? defaultResponseHeaders(compression) : nodeHeadersOf(header, 200), {
      waitForTrailers: true,
    });
  };
  let last: Buffer | undefined;
  let failure: unknown;
  try {
    if (spec.kind === "unary") {
      last = await encode(await spec.impl(input, context));
    } else {
      for await (const output of spec.impl(input, context) as AsyncIterable<unknown>) {
        const envelope = await encode(output);
        if (stream.destroyed || stream.closed) break;
        respond();
        if (!stream.write(envelope)) await drained(stream);
      }
    }
  } catch (error) {
    failure = error;
  }
  context.finish(failure);
  if (stream.destroyed || stream.closed) return;
  let trailer = context.touchedResponseTrailer;
  if (failure !== undefined) {
    trailer ??= new Headers({ "grpc-status": "0" });
    setTrailerStatus(
      trailer,
      failure instanceof ConnectError
        ? failure
        : new ConnectError("internal error", Code.Internal, undefined, undefined, failure),
    );
  }
  respond();
  stream.once("wantTrailers", () => {
    stream.sendTrailers(trailer === undefined ? OK_TRAILERS : nodeHeadersOf(trailer));
  });
  if (last === undefined) stream.end();
  else stream.end(last);
}

const OK_TRAILERS = Object.freeze({ "grpc-status": "0" });

function frame(flags: number, data: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + data.byteLength);
  out[0] = flags;
  out.writeUInt32BE(data.byteLength, 1);
  out.set(data, 5);
  return out;
}
