// A call the lean path started reading but does not take (its body is not one plain message): Connect's own
// handler for the method runs it, on the HTTP/2 stream, with the bytes already read followed by the rest of the
// stream, as connectNodeAdapter would have run it (the request converted and the response written as
// connect-node converts them), so it ends with the status, message and trailers the slow path gives.
import type { IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerResponse } from "@connectrpc/connect/protocol";
import { requestHeadersOf } from "./lean-context.js";

/** connect-node's reading of an HTTP/2 reset code (CANCEL: CANCELED, ...); undefined for NO_ERROR and the like. */
export function resetError(rstCode: number | undefined): ConnectError | undefined {
  const code = rstCode === undefined ? undefined : RESET_CODES[rstCode];
  if (code === undefined) return undefined;
  return new ConnectError(`http/2 stream closed with error code ${code[0]} (0x${rstCode!.toString(16)})`, code[1]);
}

const RESET_CODES: Readonly<Record<number, readonly [string, Code]>> = {
  1: ["PROTOCOL_ERROR", Code.Internal],
  2: ["INTERNAL_ERROR", Code.Internal],
  3: ["FLOW_CONTROL_ERROR", Code.Internal],
  4: ["SETTINGS_TIMEOUT", Code.Internal],
  6: ["FRAME_SIZE_ERROR", Code.Internal],
  7: ["REFUSED_STREAM", Code.Unavailable],
  8: ["CANCEL", Code.Canceled],
  9: ["COMPRESSION_ERROR", Code.Internal],
  10: ["CONNECT_ERROR", Code.Internal],
  11: ["ENHANCE_YOUR_CALM", Code.ResourceExhausted],
  12: ["INADEQUATE_SECURITY", Code.PermissionDenied],
  13: ["HTTP_1_1_REQUIRED", Code.PermissionDenied],
};

export interface UniversalRun {
  readonly stream: ServerHttp2Stream;
  readonly headers: IncomingHttpHeaders;
  readonly handler: UniversalHandler;
  /** What the lean path read of the body already. */
  readonly read: readonly Buffer[];
  /** Whether the body ended (nothing more to read). */
  readonly ended: boolean;
  readonly url: string;
}

async function* bodyOf(stream: ServerHttp2Stream, read: readonly Buffer[], ended: boolean): AsyncIterable<Uint8Array> {
  for (const chunk of read) yield chunk;
  if (ended) return;
  for await (const chunk of stream) yield chunk as Buffer;
}

export function runUniversal(run: UniversalRun): void {
  const { stream } = run;
  const controller = new AbortController();
  stream.once("close", () => {
    const error = resetError(stream.rstCode);
    if (error === undefined) controller.abort();
    else controller.abort(error);
  });
  run
    .handler({
      httpVersion: "2.0",
      method: run.headers[":method"] ?? "",
      url: run.url,
      header: requestHeadersOf(run.headers),
      body: bodyOf(stream, run.read, run.ended),
      signal: controller.signal,
    })
    .then((response) => writeResponse(stream, response))
    .catch(() => {
      // As connectNodeAdapter: a call whose response cannot be written is over; the stream is closed.
      if (!stream.destroyed) stream.close();
    });
}

/** Node's HTTP/2 headers from Connect's, as connect-node converts them (repeated names as arrays). */
export function nodeHeadersOf(
  headers: Headers | undefined,
  status?: number,
): Record<string, string | string[] | number> {
  const out: Record<string, string | string[] | number> = Object.create(null);
  if (status !== undefined) out[":status"] = status;
  headers?.forEach((value, key) => {
    const existing = out[key];
    if (existing === undefined) out[key] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else out[key] = [String(existing), value];
  });
  return out;
}

/** The response as connect-node writes it: headers after the first chunk, the chunks, the trailers, the end. */
async function writeResponse(stream: ServerHttp2Stream, response: UniversalServerResponse): Promise<void> {
  const respond = () => {
    if (!stream.headersSent) {
      stream.respond(
        nodeHeadersOf(response.header === undefined ? undefined : new Headers(response.header), response.status),
        {
          waitForTrailers: true,
        },
      );
    }
  };
  const it = response.body?.[Symbol.asyncIterator]();
  try {
    if (it !== undefined) {
      for (let chunk = await it.next(); chunk.done !== true; chunk = await it.next()) {
        respond();
        if (!stream.write(chunk.value)) await new Promise((resolve) => stream.once("drain", resolve));
      }
    }
    respond();
    const trailer = nodeHeadersOf(response.trailer === undefined ? undefined : new Headers(response.trailer));
    stream.once("wantTrailers", () => stream.sendTrailers(trailer));
    await new Promise<void>((resolve) => stream.end(resolve));
  } finally {
    void it?.return?.().catch(() => {});
  }
}
