// Each call, before the service: its connection's filter chain gives the routes (the inline ones, or the RDS
// resource's latest), which choose the virtual host by `:authority` (`host` when absent, A41), the route by path and
// headers, run the chain's HTTP filters with that route's overrides (RBAC), and check the route's action. A call
// that passes goes to Connect's handler for the application's routes; one that does not ends there (call-errors.ts).
// Per call this allocates the one view the filters read; the peer and local ends are the connection's.
import type { Http2ServerRequest, Http2ServerResponse, Http2Session } from "node:http2";
import { Code } from "@connectrpc/connect";
import type { ConnectionContext } from "../config/generation.js";
import type { CallView } from "../routing/server-filters.js";
import { writeCallError } from "./call-errors.js";

export type RequestHandler = (req: Http2ServerRequest, res: Http2ServerResponse) => void;

export interface CallHandlerOptions {
  /** The connection a session belongs to (undefined for a session the server did not accept under a chain). */
  readonly contextOf: (session: Http2Session) => ConnectionContext | undefined;
  /** The application's services (connectNodeAdapter's handler). */
  readonly service: RequestHandler;
  /** Told when the service's handler throws (the call then ends INTERNAL). */
  readonly onServiceError?: (error: unknown) => void;
}

const NO_CONTEXT = { code: Code.Unavailable, message: "the connection has no xDS configuration" };

export function createCallHandler(options: CallHandlerOptions): RequestHandler {
  const { contextOf, service } = options;
  return (req, res) => {
    const session = req.stream.session;
    const context = session === undefined ? undefined : contextOf(session);
    if (context === undefined) {
      writeCallError(req, res, NO_CONTEXT);
      return;
    }
    const headers = req.headers;
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
      writeCallError(req, res, denial);
      return;
    }
    try {
      service(req, res);
    } catch (error) {
      // Connect's adapter throws on what it cannot read (an authority that makes no URL, say): the peer's fault,
      // never a reason for the process to go down.
      options.onServiceError?.(error);
      writeCallError(req, res, {
        code: Code.Internal,
        message: `the request could not be read: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  };
}
