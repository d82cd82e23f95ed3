// The response of a call the server ends before it reaches the service (routing, RBAC), in the call's protocol:
// - gRPC and gRPC-Web: Trailers-Only, one HEADERS frame with `grpc-status` and `grpc-message` that ends the stream;
// - Connect streaming (`application/connect+...`): HTTP 200 and an end-stream message holding the error;
// - Connect unary (and anything else, GET included): the Connect error JSON with the code's HTTP status.
// Written here rather than by Connect's handlers, so that a denied call never enters the service's router.
import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import { Code } from "@connectrpc/connect";
import type { CallDenial } from "../routing/server-filters.js";

/** Connect's code names (the protocol's JSON `code`). */
const CODE_NAMES: Readonly<Record<number, string>> = {
  [Code.Canceled]: "canceled",
  [Code.Unknown]: "unknown",
  [Code.InvalidArgument]: "invalid_argument",
  [Code.DeadlineExceeded]: "deadline_exceeded",
  [Code.NotFound]: "not_found",
  [Code.AlreadyExists]: "already_exists",
  [Code.PermissionDenied]: "permission_denied",
  [Code.ResourceExhausted]: "resource_exhausted",
  [Code.FailedPrecondition]: "failed_precondition",
  [Code.Aborted]: "aborted",
  [Code.OutOfRange]: "out_of_range",
  [Code.Unimplemented]: "unimplemented",
  [Code.Internal]: "internal",
  [Code.Unavailable]: "unavailable",
  [Code.DataLoss]: "data_loss",
  [Code.Unauthenticated]: "unauthenticated",
};

/** The Connect protocol's HTTP status per code. */
const HTTP_STATUS: Readonly<Record<number, number>> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

/** gRPC's `grpc-message` encoding: bytes outside printable ASCII, and `%`, percent-encoded from UTF-8. */
export function encodeGrpcMessage(message: string): string {
  let out = "";
  for (const byte of Buffer.from(message, "utf8")) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function errorJson(denial: CallDenial): { code: string; message: string } {
  return { code: CODE_NAMES[denial.code] ?? "unknown", message: denial.message };
}

/** Ends the call with `denial`, in its protocol, and discards what the client still sends. */
export function writeCallError(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, denial: CallDenial): void {
  stream.resume();
  if (stream.destroyed || stream.headersSent) return;
  const contentType = headers["content-type"] ?? "";
  if (contentType.startsWith("application/grpc")) {
    stream.respond(
      {
        ":status": 200,
        "content-type": contentType,
        "grpc-status": String(denial.code),
        "grpc-message": encodeGrpcMessage(denial.message),
      },
      { endStream: true },
    );
    return;
  }
  if (contentType.startsWith("application/connect+")) {
    const json = Buffer.from(JSON.stringify({ error: errorJson(denial) }), "utf8");
    const envelope = Buffer.allocUnsafe(5 + json.length);
    envelope[0] = 0b10; // end of stream
    envelope.writeUInt32BE(json.length, 1);
    json.copy(envelope, 5);
    stream.respond({ ":status": 200, "content-type": contentType });
    stream.end(envelope);
    return;
  }
  stream.respond({ ":status": HTTP_STATUS[denial.code] ?? 500, "content-type": "application/json" });
  stream.end(JSON.stringify(errorJson(denial)));
}
