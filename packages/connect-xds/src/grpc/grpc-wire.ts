// The wire rules of a gRPC call over node:http2 that connect-node applies around connect's gRPC protocol code, for
// the lean unary call (grpc-unary-call.ts, docs/decisions.md#connect-xds-lean-unary-calls): header conversion both
// ways, and Node and HTTP/2 errors to Connect codes (envelopes.ts splits the body into messages).
// Each function states the connect-node behaviour it reproduces; the property test in grpc-unary-call.test.ts runs
// the same calls through connect's own transport and compares every outcome.
import type * as http2 from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";

/** Response headers (or trailers) as fetch `Headers`, HTTP/2 pseudo-headers left out (connect-node's conversion). */
export function headersFromNode(raw: http2.IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const name in raw) {
    if (name.charCodeAt(0) === 58 /* ":" */) continue;
    const value = raw[name];
    if (value === undefined) continue;
    if (typeof value === "string") headers.append(name, value);
    else if (typeof value === "number") headers.append(name, String(value));
    else for (const item of value) headers.append(name, item);
  }
  return headers;
}

/**
 * Adds received trailers to `target`. connect-node copies them with `set` from a converted `Headers`: a name with
 * several values keeps them joined, except `set-cookie`, of which only the last survives.
 */
export function addTrailers(target: Headers, raw: http2.IncomingHttpHeaders): void {
  for (const name in raw) {
    if (name.charCodeAt(0) === 58) continue;
    const value = raw[name];
    if (value === undefined) continue;
    if (typeof value === "string") target.set(name, value);
    else if (typeof value === "number") target.set(name, String(value));
    else if (name === "set-cookie") {
      if (value.length > 0) target.set(name, value[value.length - 1]!);
    } else {
      target.delete(name);
      for (const item of value) target.append(name, item);
    }
  }
}

/** Adds one header to a node header object as connect-node does: lower-case names, repeated names become arrays. */
export function appendNodeHeader(target: Record<string, string | string[]>, name: string, value: string): void {
  const existing = target[name];
  if (existing === undefined) target[name] = value;
  else if (Array.isArray(existing)) existing.push(value);
  else target[name] = [existing, value];
}

/**
 * Node error codes of a connection that broke or could not be made under the call: a reset or aborted TCP
 * connection, a closed pipe, an unreachable host, a stream or session destroyed under the call, an HTTP/2 session
 * that failed (ERR_HTTP2_ERROR: nghttp2 ended it, e.g. on a protocol error of the peer). gRPC fails all of
 * these UNAVAILABLE (grpc-go and grpc-java map every transport failure so), and retry policies and callers depend on
 * it; connect-node says ABORTED for a reset or a destroyed stream (docs/decisions.md#connect-xds-broken-connections).
 */
const BROKEN = new Set([
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EHOSTDOWN",
  "ERR_STREAM_DESTROYED",
  "ERR_HTTP2_INVALID_STREAM",
  "ERR_HTTP2_SESSION_ERROR",
  "ERR_HTTP2_GOAWAY_SESSION",
  "ERR_HTTP2_INVALID_SESSION",
  "ERR_HTTP2_ERROR",
]);

/** The `code` strings of an error and its chain of causes (a cause that loops back ends the walk). */
function nodeCodes(reason: unknown): string[] {
  const codes: string[] = [];
  const seen: unknown[] = [];
  let current = reason;
  while (current instanceof Error && !seen.includes(current)) {
    seen.push(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") codes.push(code);
    if (!("cause" in current)) break;
    current = current.cause;
  }
  return codes;
}

/**
 * A stream or session error as a ConnectError, as connect-node converts it but for broken connections: a
 * ConnectError as it is; otherwise ABORTED when any error of the chain is a write-after-end (connect's sign that the
 * server answered before the request was written), else UNAVAILABLE when one is a broken-connection code (BROKEN),
 * else INTERNAL; the error is the cause.
 */
export function errorFromNode(reason: unknown): ConnectError {
  if (reason instanceof ConnectError) return reason;
  const codes = nodeCodes(reason);
  let code = Code.Internal;
  if (codes.includes("ERR_STREAM_WRITE_AFTER_END")) code = Code.Aborted;
  else if (codes.some((c) => BROKEN.has(c))) code = Code.Unavailable;
  const error = ConnectError.from(reason, code);
  if (error !== reason) error.cause = reason;
  return error;
}

/**
 * connect-node's error for a broken connection (ABORTED or INTERNAL, the Node error as its cause) as errorFromNode
 * gives it: UNAVAILABLE, with the same message. Any other error is returned as it is.
 */
export function fixBrokenConnectionError(error: unknown): unknown {
  if (!(error instanceof ConnectError) || (error.code !== Code.Aborted && error.code !== Code.Internal)) return error;
  const cause = error.cause;
  if (!(cause instanceof Error) || cause instanceof ConnectError) return error;
  const fixed = errorFromNode(cause);
  return fixed.code === Code.Unavailable ? fixed : error;
}

/** HTTP/2 error code names (RFC 9113 section 7). */
const H2_NAMES = [
  "NO_ERROR",
  "PROTOCOL_ERROR",
  "INTERNAL_ERROR",
  "FLOW_CONTROL_ERROR",
  "SETTINGS_TIMEOUT",
  "STREAM_CLOSED",
  "FRAME_SIZE_ERROR",
  "REFUSED_STREAM",
  "CANCEL",
  "COMPRESSION_ERROR",
  "CONNECT_ERROR",
  "ENHANCE_YOUR_CALM",
  "INADEQUATE_SECURITY",
  "HTTP_1_1_REQUIRED",
];

/** The Connect code of a stream's RST_STREAM code, as connect-node maps it (gRPC's PROTOCOL-HTTP2.md table). */
const RESET_CODES: readonly (Code | undefined)[] = [
  undefined, // NO_ERROR
  Code.Internal, // PROTOCOL_ERROR
  Code.Internal, // INTERNAL_ERROR
  Code.Internal, // FLOW_CONTROL_ERROR
  Code.Internal, // SETTINGS_TIMEOUT
  undefined, // STREAM_CLOSED: no mapping
  Code.Internal, // FRAME_SIZE_ERROR
  Code.Unavailable, // REFUSED_STREAM
  Code.Canceled, // CANCEL
  Code.Internal, // COMPRESSION_ERROR
  Code.Internal, // CONNECT_ERROR
  Code.ResourceExhausted, // ENHANCE_YOUR_CALM
  Code.PermissionDenied, // INADEQUATE_SECURITY
  Code.PermissionDenied, // HTTP_1_1_REQUIRED
];

/** The error of a stream that closed with `rstCode`, or undefined when the code maps to none. */
export function errorFromResetCode(rstCode: number): ConnectError | undefined {
  const code = RESET_CODES[rstCode];
  if (code === undefined) return undefined;
  return new ConnectError(
    `http/2 stream closed with error code ${H2_NAMES[rstCode]} (0x${rstCode.toString(16)})`,
    code,
  );
}
