// connect-node's request handling with one change: a call that ends with an error before any response message is
// answered Trailers-Only (status and headers in the only header block, the stream ended with it), as grpc-go,
// grpc-java and grpc-js servers answer; connect-node itself sends response headers first, then the status in
// trailers. Everything else goes through connect-node's own `universalResponseToNodeResponse`.
import type * as http2 from "node:http2";
import { type ConnectRouter, type ConnectRouterOptions, createConnectRouter } from "@connectrpc/connect";
import type { UniversalServerResponse } from "@connectrpc/connect/protocol";
import { universalRequestFromNodeRequest, universalResponseToNodeResponse } from "@connectrpc/connect-node";

function nodeHeaders(headers: Headers | undefined, into: http2.OutgoingHttpHeaders): void {
  headers?.forEach((value, name) => {
    into[name] = value;
  });
}

/** The first chunk again, then the rest of `body`. */
async function* replay(first: Uint8Array, rest: AsyncIterator<Uint8Array>): AsyncIterable<Uint8Array> {
  yield first;
  for (let next = await rest.next(); next.done !== true; next = await rest.next()) yield next.value;
}

async function send(response: UniversalServerResponse, res: http2.Http2ServerResponse): Promise<void> {
  const body = response.body?.[Symbol.asyncIterator]();
  const first = await body?.next();
  if (first !== undefined && first.done !== true) {
    await universalResponseToNodeResponse({ ...response, body: replay(first.value, body!) }, res);
    return;
  }
  const status = response.trailer?.get("grpc-status");
  if (status === null || status === undefined || status === "0" || res.stream.headersSent) {
    const { body: _drained, ...rest } = response;
    await universalResponseToNodeResponse(rest, res);
    return;
  }
  const headers: http2.OutgoingHttpHeaders = { ":status": response.status };
  nodeHeaders(response.header, headers);
  nodeHeaders(response.trailer, headers);
  res.stream.respond(headers, { endStream: true });
}

export function trailersOnlyAdapter(
  options: ConnectRouterOptions & { readonly routes: (router: ConnectRouter) => void },
): (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void {
  const router = createConnectRouter(options);
  options.routes(router);
  const handlers = new Map(router.handlers.map((handler) => [handler.requestPath, handler]));
  return (req, res) => {
    const handler = handlers.get(req.url.split("?", 1)[0] ?? "");
    if (handler === undefined) {
      res.writeHead(404);
      res.end();
      return;
    }
    handler(universalRequestFromNodeRequest(req, res, undefined, undefined))
      .then((response) => send(response, res))
      .catch(() => {});
  };
}
