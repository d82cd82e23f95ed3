// Random unary calls and backend scripts (scripted-backend.ts) for comparing two gRPC call paths. Every combination
// drawn has one outcome whatever the chunking of the bytes and the timing of the two peers:
// - a message whose declared length is over the client's readMaxBytes is only ever the first of a body (connect
//   rejects it as soon as its prefix arrives, before handling earlier messages of the same read);
// - a reset after the body comes only with uncompressed messages (handled at once, not on the thread pool);
// - a backend that never answers is ended by a short deadline or by the caller's signal, never raced with an answer.
import * as http2 from "node:http2";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import { anyPack, StringValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { StatusSchema } from "@xdskit/protos/google/rpc/status_pb";
import fc from "fast-check";
import type { ConnectScript, HangScript, HeaderList, RawScript, Script } from "./scripted-backend.js";

export interface CallSpec {
  readonly value: string;
  readonly headers: HeaderList;
  readonly timeoutMs: number | undefined;
  readonly abort?: "before" | "on-receipt" | undefined;
  readonly reason?: unknown;
}

const C = http2.constants;
const HUGE = "h".repeat(300);

const text = fc.string({ maxLength: 20 });

/** `arbitrary` one time in `every`, otherwise undefined. */
function sometimes<T>(arbitrary: fc.Arbitrary<T>, every: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: every - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
}
const headerValue = fc.constantFrom("1", "a b", "gzip", "x,y", "caf%C3%A9", "~!");
const extraHeaders = (names: string[]) =>
  fc.array(fc.tuple(fc.constantFrom(...names), headerValue), { maxLength: 3 }) as fc.Arbitrary<[string, string][]>;

/** Headers a caller may set, among them ones connect replaces or keeps. */
const userHeaders = fc.array(
  fc.tuple(
    fc.constantFrom(
      "x-a",
      "x-b",
      "set-cookie",
      "user-agent",
      "content-type",
      "te",
      "grpc-timeout",
      "grpc-accept-encoding",
    ),
    fc.constantFrom("1", "a b", "100S", "gzip", "br,gzip", "x"),
  ),
  { maxLength: 4 },
);

const reason = fc.constantFrom<() => unknown>(
  () => undefined,
  () => new Error("stop"),
  () => new ConnectError("stopped by the caller", Code.Aborted),
  () => "text reason",
);

const grpcMessage = fc.constantFrom("", "plain", "with%20space", "%E2%82%AC", "%zz", "caf%C3%A9", "100%");

/** A valid `grpc-status-details-bin` (base64 of google.rpc.Status, padded or not) or a broken one. */
const statusDetails = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .record({ code: fc.integer({ min: 0, max: 16 }), message: text, detail: text, padded: fc.boolean() })
      .map(({ code, message, detail, padded }) => {
        const bytes = toBinary(
          StatusSchema,
          create(StatusSchema, {
            code,
            message,
            details: [anyPack(StringValueSchema, create(StringValueSchema, { value: detail }))],
          }),
        );
        const base64 = Buffer.from(bytes).toString("base64");
        return padded ? base64 : base64.replace(/=+$/, "");
      }),
  },
  { weight: 1, arbitrary: fc.constant("!!not-base64") },
);

const statusFields = fc
  .record({
    status: fc.oneof(
      { weight: 3, arbitrary: fc.constant("0") },
      fc.integer({ min: 1, max: 16 }).map(String),
      fc.constantFrom("99", "x"),
    ),
    message: fc.option(grpcMessage, { nil: undefined }),
    details: sometimes(statusDetails, 5),
  })
  .map(({ status, message, details }) => {
    const list: [string, string][] = [["grpc-status", status]];
    if (message !== undefined) list.push(["grpc-message", message]);
    if (details !== undefined) list.push(["grpc-status-details-bin", details]);
    return list;
  });

type EnvelopeKind =
  | "message"
  | "flagged"
  | "json"
  | "garbage"
  | "empty"
  | "gzip"
  | "br"
  | "badzip"
  | "huge"
  | "at64"
  | "over64"
  | "at200"
  | "over200";

/** Kinds whose length may exceed a client's readMaxBytes (64 or 200 in the test's configurations). */
const LARGE: EnvelopeKind[] = ["huge", "at64", "over64", "at200", "over200"];

/** A StringValue of exactly `bytes` bytes on the wire (tag, length varint, value). */
function valueOfSize(bytes: number): string {
  return "s".repeat(bytes - (bytes - 2 < 128 ? 2 : 3));
}

function envelope(kind: EnvelopeKind, value: string): Uint8Array {
  const binary = toBinary(StringValueSchema, create(StringValueSchema, { value }));
  const [flags, payload]: [number, Uint8Array] =
    kind === "message"
      ? [0, binary]
      : kind === "flagged"
        ? [0x80, binary]
        : kind === "json"
          ? [0, Buffer.from(toJsonString(StringValueSchema, create(StringValueSchema, { value })))]
          : kind === "garbage"
            ? [0, Uint8Array.of(0x0a, 0x7f, 0x01)]
            : kind === "empty"
              ? [0, new Uint8Array(0)]
              : kind === "gzip"
                ? [1, gzipSync(binary)]
                : kind === "br"
                  ? [1, brotliCompressSync(binary)]
                  : kind === "badzip"
                    ? [1, Uint8Array.of(1, 2, 3, 4)]
                    : [0, toBinary(StringValueSchema, create(StringValueSchema, { value: largeValue(kind) }))];
  const out = new Uint8Array(payload.length + 5);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, payload.length);
  out.set(payload, 5);
  return out;
}

function largeValue(kind: EnvelopeKind): string {
  const size = { at64: 64, over64: 65, at200: 200, over200: 201 }[kind as "at64"];
  return size === undefined ? HUGE : valueOfSize(size);
}

/** Body bytes: up to three messages (an over-limit one only first), maybe cut short, split into 1-3 writes. */
function bodyOf(compressedAllowed: boolean): fc.Arbitrary<Uint8Array[]> {
  const kinds: EnvelopeKind[] = ["message", "message", "message", "flagged", "json", "garbage", "empty"];
  if (compressedAllowed) kinds.push("gzip", "br", "badzip");
  return fc
    .record({
      first: fc.constantFrom<EnvelopeKind>(...kinds, ...kinds, ...LARGE),
      rest: fc.array(fc.constantFrom(...kinds), { maxLength: 2 }),
      count: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: 3 })),
      value: text,
      cut: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 7 })),
      splits: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 2 }),
    })
    .map(({ first, rest, count, value, cut, splits }) => {
      const kinds = [first, ...rest].slice(0, count);
      const parts = kinds.map((kind) => envelope(kind, value));
      let bytes = Buffer.concat(parts);
      if (cut > 0 && bytes.length > 0) bytes = bytes.subarray(0, Math.max(0, bytes.length - cut));
      const points = splits.map((f) => Math.floor(f * bytes.length)).sort((a, b) => a - b);
      const chunks: Uint8Array[] = [];
      let at = 0;
      for (const point of [...points, bytes.length]) {
        if (point > at) chunks.push(bytes.subarray(at, point));
        at = Math.max(at, point);
      }
      return chunks;
    });
}

const rawScript: fc.Arbitrary<RawScript> = fc
  .record({
    resetFirst: sometimes(
      fc.constantFrom(
        C.NGHTTP2_CANCEL,
        C.NGHTTP2_INTERNAL_ERROR,
        C.NGHTTP2_REFUSED_STREAM,
        C.NGHTTP2_ENHANCE_YOUR_CALM,
        C.NGHTTP2_PROTOCOL_ERROR,
        C.NGHTTP2_STREAM_CLOSED,
        C.NGHTTP2_HTTP_1_1_REQUIRED,
      ),
      10,
    ),
    status: fc.oneof(
      { weight: 8, arbitrary: fc.constant(200) },
      fc.constantFrom(400, 401, 403, 404, 429, 500, 502, 503, 504),
    ),
    contentType: fc.constantFrom(
      "application/grpc",
      "application/grpc",
      "application/grpc",
      "application/grpc+proto",
      "application/grpc+proto",
      "application/grpc+json",
      "application/grpc+json; charset=utf-8",
      "text/html",
      undefined,
    ),
    encoding: sometimes(fc.constantFrom("gzip", "br", "identity", "zstd", "broken"), 3),
    headerStatus: sometimes(statusFields, 4),
    extra: extraHeaders(["x-h", "set-cookie", "x-i"]),
    endWithHeaders: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
    trailers: fc.option(fc.tuple(statusFields, extraHeaders(["x-t", "set-cookie"])), { freq: 6, nil: undefined }),
    reset: sometimes(
      fc.record({
        code: fc.constantFrom(
          C.NGHTTP2_CANCEL,
          C.NGHTTP2_INTERNAL_ERROR,
          C.NGHTTP2_NO_ERROR,
          C.NGHTTP2_ENHANCE_YOUR_CALM,
        ),
        flushed: fc.boolean(),
      }),
      7,
    ),
  })
  .chain((r) =>
    bodyOf(r.reset === undefined).map((body): RawScript => {
      const headers: [string, string][] = [...r.extra];
      if (r.contentType !== undefined) headers.push(["content-type", r.contentType]);
      if (r.encoding !== undefined) headers.push(["grpc-encoding", r.encoding]);
      if (r.headerStatus !== undefined) headers.push(...r.headerStatus);
      return {
        kind: "raw",
        ...(r.resetFirst === undefined ? {} : { resetFirst: r.resetFirst }),
        status: r.status,
        headers,
        endWithHeaders: r.endWithHeaders,
        body,
        ...(r.trailers === undefined ? {} : { trailers: [...r.trailers[0], ...r.trailers[1]] }),
        ...(r.reset === undefined ? {} : { resetAfter: r.reset }),
      };
    }),
  );

const connectScript: fc.Arbitrary<ConnectScript> = fc.record({
  kind: fc.constant("connect" as const),
  compressAll: fc.boolean(),
  headers: extraHeaders(["x-h", "set-cookie"]),
  trailers: extraHeaders(["x-t", "set-cookie"]),
  result: fc.oneof(
    fc.record({ value: fc.oneof(fc.constant(""), text, fc.constant(HUGE)) }),
    fc.record({
      code: fc.integer({ min: 1, max: 16 }) as fc.Arbitrary<Code>,
      message: fc.constantFrom("", "failed", "café ü €", "100% sure", "a\nb"),
      metadata: extraHeaders(["x-m", "set-cookie"]),
      details: fc.array(text, { maxLength: 2 }),
    }),
  ),
});

/** Request values, some at or just over a writeMaxBytes of 64 once encoded. */
const value = fc.oneof({ weight: 5, arbitrary: text }, fc.constantFrom(HUGE, valueOfSize(64), valueOfSize(65)));

/** A call and the script of its answer. */
export function callAndScript(): fc.Arbitrary<{ spec: CallSpec; script: Script }> {
  const answered = fc.record({
    spec: fc.record({
      value,
      headers: userHeaders,
      timeoutMs: fc.constantFrom(undefined, undefined, 0, -1, 60_000),
      abort: sometimes(fc.constant("before" as const), 8),
      reason: reason.map((make) => make()),
    }),
    script: fc.oneof(rawScript, connectScript) as fc.Arbitrary<Script>,
  });
  const hang: HangScript = { kind: "hang" };
  const unanswered = fc.record({
    spec: fc.oneof(
      fc.record({ value, headers: userHeaders, timeoutMs: fc.integer({ min: 1, max: 20 }) }),
      fc.record({
        value,
        headers: userHeaders,
        timeoutMs: fc.constant(undefined),
        abort: fc.constant("on-receipt" as const),
        reason: reason.map((make) => make()),
      }),
    ),
    script: fc.constant(hang as Script),
  });
  return fc.oneof({ weight: 9, arbitrary: answered }, unanswered);
}
