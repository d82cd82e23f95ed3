// A bare HTTP/2 server on 127.0.0.1 for tests of what the client does with what arrives on the wire (misbehaving
// servers, gRPC framing), and a client watching one test listener on it. `closeRawServer` in afterEach.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { createXdsClient, type XdsClient } from "../../src/index.js";
import { recordingWatcher, type WatchEvent } from "./recorder.js";
import { type TestListener, testListenerType } from "./test-types.js";

let server: http2.Http2Server | undefined;
let client: XdsClient | undefined;
const sessions = new Set<http2.ServerHttp2Session>();

export async function closeRawServer(): Promise<void> {
  await client?.close();
  for (const s of sessions) s.destroy();
  if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
  server = undefined;
  client = undefined;
}

/** Serves every stream with `handler`; resolves to the port. */
export async function serveRaw(
  handler: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void,
): Promise<number> {
  server = http2.createServer();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  server.on("stream", (stream, headers) => {
    // Errors on the test server's own side of a stream are expected here; the client's side is what is tested.
    stream.on("error", () => {});
    handler(stream, headers);
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

/** A client watching listener "L" on the server at `port`: its first `count` events (waits up to 3 s). */
export async function firstEventsOf(
  port: number,
  count = 1,
  maxReceiveMessageBytes?: number,
): Promise<WatchEvent<TestListener>[]> {
  client = createXdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: `127.0.0.1:${port}`, channel_creds: [{ type: "insecure" }] }],
      node: { id: "n" },
    },
    env: {},
    ...(maxReceiveMessageBytes === undefined ? {} : { maxReceiveMessageBytes }),
  });
  const w = recordingWatcher<TestListener>();
  client.watch(testListenerType, "L", w);
  for (let i = 0; i < 300 && w.events.length < count; i++) await new Promise((r) => setTimeout(r, 10));
  return w.take();
}

/** `message` in gRPC's framing: a flags byte (1: compressed), the length as 4 bytes big-endian, the bytes. */
export function framed(message: Uint8Array, flags = 0): Buffer {
  const prefix = Buffer.alloc(5);
  prefix[0] = flags;
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}
