// Child process of connect-xds-calls.ts: a backend on 127.0.0.1 (port 0) answering the echo service's unary
// method with `<name>:<value>`. Sends its port over IPC; exits when the parent disconnects.
// `node echo-backend-worker.js <name> [connect|h2]`:
// - connect (default): connect-node's connectNodeAdapter on node:http2;
// - h2: the same answer written straight on node:http2 streams (one message, `grpc-status: 0` trailers), so
//   that the backend costs less CPU per call than the clients measured against it and calls per second compare
//   the clients rather than the backend.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { EchoService } from "../lib/echo-service.js";

const name = process.argv[2] ?? "backend";
const kind = process.argv[3] ?? "connect";

const answer = (value: string) => create(StringValueSchema, { value: `${name}:${value}` });

/** One unary echo call on a raw stream: read the framed request, answer one framed message and OK trailers. */
function echoStream(stream: http2.ServerHttp2Stream): void {
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
            } as never);
          },
        }),
      );
server.on("session", (session) => session.on("error", () => {}));
server.listen(0, "127.0.0.1", () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
process.on("disconnect", () => process.exit(0));
