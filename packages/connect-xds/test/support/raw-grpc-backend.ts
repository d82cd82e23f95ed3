// A gRPC backend written straight on node:http2, for what connect-node's server cannot be made to send: a
// Trailers-Only response (the status in the only header block, as grpc-go, grpc-java and grpc-js servers answer an
// error before any message), or headers, messages and then an error status in the trailers. Every request body is
// read as google.protobuf.StringValue messages; each request's answer is chosen by the test from its attempt number.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";

/** One answer: messages (StringValue values) then a status; Trailers-Only when `trailersOnly` (no messages). */
export interface RawAnswer {
  readonly trailersOnly?: boolean;
  readonly messages?: readonly string[];
  readonly code: number;
  readonly message?: string;
  /** Answer as soon as the request headers arrive (and this many request messages), not when the request ends. */
  readonly afterMessages?: number;
  /** Reset the stream with REFUSED_STREAM at once instead (the server never processed it). */
  readonly refuse?: boolean;
}

export interface RawRequest {
  readonly path: string;
  readonly headers: http2.IncomingHttpHeaders;
  /** The request's StringValue values, complete once the request ended. */
  readonly values: string[];
  /** 1 for the first request the backend saw, 2 for the next... */
  readonly index: number;
}

export interface RawGrpcBackend {
  readonly address: string;
  readonly requests: readonly RawRequest[];
  /** Resolves once the backend has seen `count` requests in all. */
  requested(count: number): Promise<void>;
  /** How every later request is answered. */
  answer(choose: (request: RawRequest) => RawAnswer): void;
  close(): Promise<void>;
}

/** A gRPC length-prefixed StringValue (values under 128 bytes). */
export function stringValueFrame(value: string): Buffer {
  const text = Buffer.from(value);
  const body = text.length === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x0a, text.length]), text]);
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(body.length, 1);
  return Buffer.concat([prefix, body]);
}

/** The StringValue values of complete gRPC messages at the front of `buffer`; returns what is left. */
function readValues(buffer: Buffer, into: string[]): Buffer {
  let rest = buffer;
  while (rest.length >= 5) {
    const length = rest.readUInt32BE(1);
    if (rest.length < 5 + length) break;
    const body = rest.subarray(5, 5 + length);
    into.push(body.length === 0 ? "" : body.subarray(2).toString());
    rest = rest.subarray(5 + length);
  }
  return rest;
}

function respond(stream: http2.ServerHttp2Stream, answer: RawAnswer): void {
  if (stream.closed || stream.headersSent) return;
  const status = { "grpc-status": String(answer.code), "grpc-message": encodeURIComponent(answer.message ?? "") };
  if (answer.trailersOnly === true) {
    stream.respond({ ":status": 200, "content-type": "application/grpc", ...status }, { endStream: true });
    return;
  }
  stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
  stream.on("wantTrailers", () => stream.sendTrailers(status));
  for (const value of answer.messages ?? []) stream.write(stringValueFrame(value));
  stream.end();
}

export async function startRawGrpcBackend(): Promise<RawGrpcBackend> {
  const requests: RawRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let choose: (request: RawRequest) => RawAnswer = () => ({ code: 12, trailersOnly: true });
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("error", () => {});
    session.on("close", () => sessions.delete(session));
  });
  server.on("stream", (stream, headers) => {
    stream.on("error", () => {});
    const request: RawRequest = {
      path: String(headers[":path"]),
      headers,
      values: [],
      index: requests.length + 1,
    };
    requests.push(request);
    for (const waiter of waiters.splice(0)) {
      if (requests.length >= waiter.count) waiter.resolve();
      else waiters.push(waiter);
    }
    const answer = choose(request);
    if (answer.refuse === true) {
      stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      return;
    }
    let pending: Buffer = Buffer.alloc(0);
    const early = answer.afterMessages;
    if (early === 0) respond(stream, answer);
    stream.on("data", (chunk: Buffer) => {
      pending = readValues(Buffer.concat([pending, chunk]), request.values);
      if (early !== undefined && request.values.length >= early) respond(stream, answer);
    });
    stream.on("end", () => respond(stream, answer));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    requested: (count) =>
      requests.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    answer(next) {
      choose = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  };
}
