// A backend on 127.0.0.1 whose every answer is scripted by the test: the request header `x-script` names a script
// that either has connect-node answer (headers, trailers, a message, twice for a server stream, or an error with
// metadata and details, with or without compressing every response) or writes a raw HTTP/2 response (any status,
// headers, body bytes, trailers, trailers-only, RST_STREAM at a chosen point), or never answers. It records each
// request it read to the end (headers and body), so a test can compare what two clients sent.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { compressionBrotli, compressionGzip, connectNodeAdapter } from "@connectrpc/connect-node";
import { EchoService } from "./echo-service.js";

export type HeaderList = readonly (readonly [string, string])[];

/** connect-node answers. */
export interface ConnectScript {
  readonly kind: "connect";
  /** Compress every response message the client accepts (compressMinBytes 0), not only those of 1 KiB and more. */
  readonly compressAll: boolean;
  readonly headers: HeaderList;
  readonly trailers: HeaderList;
  readonly result:
    | { readonly value: string }
    | { readonly code: Code; readonly message: string; readonly metadata: HeaderList; readonly details: string[] };
}

/** A raw HTTP/2 answer, written once the request ended. */
export interface RawScript {
  readonly kind: "raw";
  /** RST_STREAM with this code instead of any answer. */
  readonly resetFirst?: number;
  readonly status: number;
  readonly headers: HeaderList;
  /** Ends the stream with the headers (a trailers-only response): no body, no trailers. */
  readonly endWithHeaders: boolean;
  /** Body bytes, written chunk by chunk. */
  readonly body: readonly Uint8Array[];
  /** Trailers to end with (unless reset); none: the stream ends with the last body chunk. */
  readonly trailers?: HeaderList;
  /** Closes the stream with this code after the headers and body instead of ending it: at once, or once the body
   * was written (node:http2 then sends what it had, sometimes END_STREAM, sometimes RST_STREAM). */
  readonly resetAfter?: { readonly code: number; readonly flushed: boolean };
}

/** Never answers; the backend records the RST_STREAM code the client ends the stream with. */
export interface HangScript {
  readonly kind: "hang";
}

export type Script = ConnectScript | RawScript | HangScript;

/** A request the backend handled: its headers and its body (raw: the bytes in hex; connect: the message's value). */
export interface SeenRequest {
  readonly headers: HeaderList;
  readonly body: string;
}

export interface ScriptedBackend {
  readonly address: string;
  /** Runs `script` for requests with `x-script: <id>`; `onReceived` when such a request's headers arrive. */
  set(id: string, script: Script, onReceived?: () => void): void;
  /** The requests with `x-script: <id>` that reached their script (raw: read to the end; connect: the handler). */
  seen(id: string): SeenRequest[];
  /** The reset codes of the first `count` streams of a hang script `id`, once that many were closed. */
  resets(id: string, count: number): Promise<number[]>;
  forget(id: string): void;
  close(): Promise<void>;
}

function sortedList(list: [string, string][]): HeaderList {
  return list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : 1));
}

function headerList(raw: http2.IncomingHttpHeaders): HeaderList {
  const list: [string, string][] = [];
  for (const [name, value] of Object.entries(raw)) {
    if (name.startsWith(":") || value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [String(value)]) list.push([name, item]);
  }
  return sortedList(list);
}

function toNode(list: HeaderList): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of list) {
    const existing = out[name];
    out[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  return out;
}

export async function startScriptedBackend(): Promise<ScriptedBackend> {
  const scripts = new Map<string, { script: Script; onReceived: (() => void) | undefined }>();
  const seen = new Map<string, SeenRequest[]>();
  const resets = new Map<string, number[]>();
  let onReset: (() => void)[] = [];
  const scriptOf = (headers: Headers | http2.IncomingHttpHeaders) => {
    const id = headers instanceof Headers ? headers.get("x-script") : headers["x-script"];
    return typeof id === "string" ? scripts.get(id)?.script : undefined;
  };
  const record = (id: string, request: SeenRequest) => {
    const list = seen.get(id) ?? [];
    list.push(request);
    seen.set(id, list);
  };
  const answer = async (request: { value: string }, context: HandlerContext) => {
    const script = scriptOf(context.requestHeader) as ConnectScript;
    record(String(context.requestHeader.get("x-script")), {
      headers: sortedList([...context.requestHeader]),
      body: `value:${request.value}`,
    });
    for (const [name, value] of script.headers) context.responseHeader.append(name, value);
    for (const [name, value] of script.trailers) context.responseTrailer.append(name, value);
    const result = script.result;
    if ("value" in result) return create(StringValueSchema, { value: result.value || request.value });
    throw new ConnectError(
      result.message,
      result.code,
      toNode(result.metadata),
      result.details.map((value) => ({ desc: StringValueSchema, value: { value } })),
    );
  };
  const adapter = (compressMinBytes: number) =>
    connectNodeAdapter({
      acceptCompression: [compressionGzip, compressionBrotli],
      compressMinBytes,
      routes: (router) =>
        router.service(EchoService, {
          unary: answer,
          // A server stream answers the unary answer twice (or fails as it fails).
          async *serverStream(request: { value: string }, context: HandlerContext) {
            const message = await answer(request, context);
            yield message;
            yield message;
          },
        } as never),
    });
  const plain = adapter(1024);
  const compressing = adapter(0);

  const server = http2.createServer((req, res) => {
    const id = String(req.headers["x-script"]);
    const entry = scripts.get(id);
    entry?.onReceived?.();
    const script = entry?.script;
    if (script?.kind === "connect") {
      (script.compressAll ? compressing : plain)(req, res);
      return;
    }
    const chunks: Buffer[] = [];
    const stream = req.stream;
    if (script?.kind === "hang") {
      stream.on("close", () => {
        resets.set(id, [...(resets.get(id) ?? []), stream.rstCode]);
        const waiting = onReset;
        onReset = [];
        for (const wake of waiting) wake();
      });
    }
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      record(id, { headers: headerList(req.headers), body: Buffer.concat(chunks).toString("hex") });
      if (script?.kind === "raw") writeRaw(stream, script);
    });
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("error", () => {});
    session.on("close", () => sessions.delete(session));
  });
  server.on("stream", (stream) => stream.on("error", () => {}));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    set: (id, script, onReceived) => scripts.set(id, { script, onReceived }),
    seen: (id) => seen.get(id) ?? [],
    resets: (id, count) =>
      new Promise((resolve) => {
        const check = () => {
          const list = resets.get(id) ?? [];
          if (list.length >= count) resolve(list.slice(0, count));
          else onReset.push(check);
        };
        check();
      }),
    forget: (id) => {
      scripts.delete(id);
      seen.delete(id);
      resets.delete(id);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
}

function writeRaw(stream: http2.ServerHttp2Stream, script: RawScript): void {
  if (stream.closed || stream.destroyed) return;
  if (script.resetFirst !== undefined) {
    stream.close(script.resetFirst);
    return;
  }
  // The compatibility layer this server also runs sends its own (empty) trailers on 'wantTrailers'.
  stream.removeAllListeners("wantTrailers");
  const headers = { ...toNode(script.headers), ":status": script.status };
  if (script.endWithHeaders) {
    stream.respond(headers, { endStream: true });
    return;
  }
  const reset = script.resetAfter;
  const trailers = reset === undefined ? script.trailers : undefined;
  stream.respond(headers, { waitForTrailers: trailers !== undefined });
  if (trailers !== undefined) {
    stream.once("wantTrailers", () => {
      // A client that failed the call may have reset the stream meanwhile.
      if (!stream.closed) stream.sendTrailers(toNode(trailers));
    });
  }
  for (const chunk of script.body) stream.write(chunk);
  if (reset === undefined) stream.end();
  else if (!reset.flushed) stream.close(reset.code);
  else stream.write(new Uint8Array(0), () => stream.close(reset.code));
}

export { Code };
