// Child process of connect-xds-calls.ts and connect-xds-streams.ts: a backend on 127.0.0.1 (port 0) answering the
// echo service's unary method with `<name>:<value>` and its server stream `<count>:<size>` with `count` messages.
// Sends its port over IPC, answers the message "cpu" with its CPU time so far (microseconds, `{ cpuUs }`) and "marks"
// with when its first connection, request, handler call and finished response came since the last "marks" (`{ marks
// }`, connect kind), and exits when the parent disconnects.
// `node echo-backend-worker.js <name> [connect|h2]`:
// - connect (default): connect-node's connectNodeAdapter on node:http2;
// - h2: the same answers written straight on node:http2 streams (framed messages, `grpc-status: 0` trailers), so
//   that the backend costs less CPU per call than the clients measured against it and calls per second compare
//   the clients rather than the backend.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { EchoService, STREAM_PATH } from "../lib/echo-service.js";

const name = process.argv[2] ?? "backend";
const kind = process.argv[3] ?? "connect";

const answer = (value: string) => {
  mark("handler");
  return create(StringValueSchema, { value: `${name}:${value}` });
};

/** When (ms since the epoch, fractional) the first connection, request, handler call and response came after "marks". */
const marks: Record<string, number> = {};
function mark(what: "connection" | "request" | "handler" | "finish"): void {
  marks[what] ??= performance.timeOrigin + performance.now();
}

/** `count` and `size` of a server-stream request `<count>:<size>`. */
function streamShape(value: string): { count: number; size: number } {
  const [count, size] = value.split(":").map(Number);
  return { count: count ?? 0, size: size ?? 0 };
}

/** The framed bytes of one StringValue message. */
function framed(value: string): Buffer {
  const bytes = toBinary(StringValueSchema, create(StringValueSchema, { value }));
  const frame = Buffer.allocUnsafe(bytes.length + 5);
  frame[0] = 0;
  frame.writeUInt32BE(bytes.length, 1);
  frame.set(bytes, 5);
  return frame;
}

/** A server stream on a raw stream: `count` framed messages written as flow control allows, then OK trailers. */
function streamMessages(stream: http2.ServerHttp2Stream, value: string): void {
  const { count, size } = streamShape(value);
  const frame = framed("m".repeat(size));
  stream.respond({ ":status": 200, "content-type": "application/grpc+proto" }, { waitForTrailers: true });
  stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
  let sent = 0;
  const write = () => {
    while (sent < count) {
      sent++;
      if (!stream.write(frame)) {
        stream.once("drain", write);
        return;
      }
    }
    stream.end();
  };
  write();
}

/** One unary echo call on a raw stream: read the framed request, answer one framed message and OK trailers. */
function echoStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
  stream.on("error", () => {});
  const chunks: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  stream.on("end", () => {
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    if (body.length < 5 || body[0] !== 0) {
      stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": "12" }, { endStream: true });
      return;
    }
    const request = fromBinary(StringValueSchema, body.subarray(5));
    if (headers[":path"] === STREAM_PATH) {
      streamMessages(stream, request.value);
      return;
    }
    const bytes = toBinary(StringValueSchema, answer(request.value));
    const frame = Buffer.allocUnsafe(bytes.length + 5);
    frame[0] = 0;
    frame.writeUInt32BE(bytes.length, 1);
    frame.set(bytes, 5);
    stream.respond({ ":status": 200, "content-type": "application/grpc+proto" }, { waitForTrailers: true });
    stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(frame);
  });
}

const server =
  kind === "h2"
    ? http2.createServer().on("stream", echoStream)
    : http2.createServer(
        connectNodeAdapter({
          routes: (router) => {
            router.service(EchoService, {
              unary: (request: { value: string }) => answer(request.value),
              async *serverStream(request: { value: string }) {
                const { count, size } = streamShape(request.value);
                const message = create(StringValueSchema, { value: "m".repeat(size) });
                for (let i = 0; i < count; i++) yield message;
              },
            } as never);
          },
        }),
      );
server.on("session", (session) => session.on("error", () => {}));
server.on("connection", () => mark("connection"));
// The connect kind only: a 'request' listener makes node:http2 build its compatibility objects for every stream.
if (kind !== "h2") {
  server.on("request", (_request: http2.Http2ServerRequest, response: http2.Http2ServerResponse) => {
    mark("request");
    response.once("finish", () => mark("finish"));
  });
}
server.listen(0, "127.0.0.1", () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
process.on("message", (message) => {
  if (message === "cpu") {
    const used = process.cpuUsage();
    process.send?.({ cpuUs: used.user + used.system });
  } else if (message === "marks") {
    process.send?.({ marks: { ...marks } });
    for (const key of Object.keys(marks)) delete marks[key];
  }
});
process.on("disconnect", () => process.exit(0));
