// Each call, before the service: its connection's filter chain gives the routes (the inline ones, or the RDS
// resource's latest), which choose the virtual host by `:authority` (`host` when absent, A41), the route by path and
// headers, run the chain's HTTP filters with that route's overrides (RBAC), and check the route's action. A call
// that passes goes to the application's services: the lean gRPC path when it takes the call (grpc-fast-path.ts),
// else Connect's node adapter over Node's compatibility request and response, made here as Node's HTTP/2 server
// makes them for its `request` event. A call that does not pass ends here (call-errors.ts).
// Per call this allocates the one view the filters read; the peer and local ends are the connection's.
import { Http2ServerRequest, Http2ServerResponse, type IncomingHttpHeaders, type ServerHttp2Stream } from "node:http2";
import { Code } from "@connectrpc/connect";
import type { ConnectionContext } from "../config/generation.js";
import type { CallView } from "../routing/server-filters.js";
import { writeCallError } from "./call-errors.js";
import type { GrpcFastPath } from "./grpc-fast-path.js";

export type RequestHandler = (req: Http2ServerRequest, res: Http2ServerResponse) => void;
export type StreamHandler = (
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  flags: number,
  rawHeaders: string[],
) => void;

export interface CallHandlerOptions {
  /** The connection a session belongs to (undefined for a session the server did not accept under a chain). */
  readonly contextOf: (session: NonNullable<ServerHttp2Stream["session"]>) => ConnectionContext | undefined;
  /** The application's services (connectNodeAdapter's handler). */
  readonly service: RequestHandler;
  /** The lean path for the gRPC calls it takes; undefined: every call goes to `service`. */
  readonly fastPath?: GrpcFastPath | undefined;
  /** Told when the service's handler throws (the call then ends INTERNAL). */
  readonly onServiceError?: (error: unknown) => void;
  /** Told of a stream's error (a reset with an error code, a write after the client left). */
  readonly onStreamError?: (error: Error) => void;
}

const NO_CONTEXT = { code: Code.Unavailable, message: "the connection has no xDS configuration" };
const HTTP_STATUS_METHOD_NOT_ALLOWED = 405;
const HTTP_STATUS_EXPECTATION_FAILED = 417;

export function createCallHandler(options: CallHandlerOptions): StreamHandler {
  const { contextOf, service, fastPath } = options;

  /** Node's compatibility objects and its checks before `request` (CONNECT, Expect), then the service. */
  function slowPath(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, rawHeaders: string[]): void {
    const req = new Http2ServerRequest(stream, headers, undefined as never, rawHeaders);
    const res = new Http2ServerResponse(stream);
    if (headers[":method"] === "CONNECT") {
      res.statusCode = HTTP_STATUS_METHOD_NOT_ALLOWED;
      res.end();
      return;
    }
    if (headers.expect !== undefined) {
      if (headers.expect !== "100-continue") {
        res.statusCode = HTTP_STATUS_EXPECTATION_FAILED;
        res.end();
        return;
      }
      res.writeContinue();
    }
    try {
      service(req, res);
    } catch (error) {
      // Connect's adapter throws on what it cannot read (an authority that makes no URL, say): the peer's fault,
      // never a reason for the process to go down.
      options.onServiceError?.(error);
      writeCallError(stream, headers, {
        code: Code.Internal,
        message: `the request could not be read: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  }

  const onStreamError = (error: Error) => options.onStreamError?.(error);
  return (stream, headers, _flags, rawHeaders) => {
    // A client that resets a stream with an error code makes Node emit it on the stream: never the process's end.
    stream.on("error", onStreamError);
    const session = stream.session;
    const context = session === undefined ? undefined : contextOf(session);
    if (context === undefined) {
      writeCallError(stream, headers, NO_CONTEXT);
      return;
    }
    const rawPath = headers[":path"] ?? "";
    const query = rawPath.indexOf("?");
    const call: CallView = {
      path: query < 0 ? rawPath : rawPath.slice(0, query),
      headers,
      peer: context.peer,
      local: context.local,
    };
    const denial = context.runtime.routeTable().decide(call, headers[":authority"] ?? headers.host ?? "");
    if (denial !== undefined) {
      writeCallError(stream, headers, denial);
      return;
    }
    if (fastPath?.(stream, headers) === true) return;
    slowPath(stream, headers, rawHeaders);
  };
}
