// An HTTP/2 peer on 127.0.0.1 that answers every request stream with frames the test lists, written in one go:
// what node:http2's server API cannot send, such as RST_STREAM(CANCEL) right after a DATA frame. It speaks just
// enough HTTP/2 for node's client: the preface, SETTINGS and their ACKs; request frames are otherwise ignored.
// Header blocks are HPACK literals without indexing (no Huffman), so names and values stay under 127 bytes.
import type { AddressInfo } from "node:net";
import * as net from "node:net";
import { trackSockets } from "./hostile-backends.js";

export type Frame =
  | { readonly type: "headers"; readonly headers: readonly (readonly [string, string])[]; readonly endStream?: boolean }
  | { readonly type: "data"; readonly bytes: Uint8Array; readonly endStream?: boolean }
  | { readonly type: "rst"; readonly code: number }
  /** A PUSH_PROMISE on the request stream, promising the connection's next even stream id. */
  | { readonly type: "push_promise"; readonly headers: readonly (readonly [string, string])[] }
  /**
   * Not a frame: once the client has read the frames before it (it answered a PING sent after them), the TCP
   * connection is reset (RST), not closed.
   */
  | { readonly type: "tcp_reset" };

export interface FrameServer {
  readonly address: string;
  /** The frames every request stream gets from now on (a function: called for each stream). */
  answer(frames: readonly Frame[] | (() => readonly Frame[])): void;
  /** TCP connections accepted and not yet closed. */
  readonly openSockets: number;
  /** Resolves once no accepted connection is open; rejects after `timeoutMs`. */
  allClosed(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const PREFACE_LENGTH = 24;
const TYPE = { data: 0, headers: 1, rst: 3, settings: 4, push_promise: 5, ping: 6 } as const;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const ACK = 0x1;

function frameBytes(type: number, flags: number, streamId: number, payload: Uint8Array): Buffer {
  const out = Buffer.alloc(9 + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(streamId, 5);
  out.set(payload, 9);
  return out;
}

function headerBlock(headers: readonly (readonly [string, string])[]): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of headers) {
    parts.push(Buffer.from([0x00, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value));
  }
  return Buffer.concat(parts);
}

function encode(frame: Exclude<Frame, { type: "tcp_reset" }>, streamId: number, nextPushId: () => number): Buffer {
  switch (frame.type) {
    case "push_promise": {
      const promised = Buffer.alloc(4);
      promised.writeUInt32BE(nextPushId());
      return frameBytes(
        TYPE.push_promise,
        END_HEADERS,
        streamId,
        Buffer.concat([promised, headerBlock(frame.headers)]),
      );
    }
    case "headers":
      return frameBytes(
        TYPE.headers,
        END_HEADERS | (frame.endStream ? END_STREAM : 0),
        streamId,
        headerBlock(frame.headers),
      );
    case "data":
      return frameBytes(TYPE.data, frame.endStream ? END_STREAM : 0, streamId, frame.bytes);
    case "rst": {
      const code = Buffer.alloc(4);
      code.writeUInt32BE(frame.code);
      return frameBytes(TYPE.rst, 0, streamId, code);
    }
  }
}

export async function startFrameServer(): Promise<FrameServer> {
  let framesFor: () => readonly Frame[] = () => [];
  const server = net.createServer((socket) => {
    let pushId = 0;
    const nextPushId = () => (pushId += 2);
    let resetOnPingAck = false;
    socket.write(frameBytes(TYPE.settings, 0, 0, new Uint8Array(0)));
    let buffer = Buffer.alloc(0);
    let prefaceLeft = PREFACE_LENGTH;
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const skip = Math.min(prefaceLeft, buffer.length);
      buffer = buffer.subarray(skip);
      prefaceLeft -= skip;
      while (buffer.length >= 9) {
        const length = buffer.readUIntBE(0, 3);
        if (buffer.length < 9 + length) break;
        const type = buffer[3]!;
        const flags = buffer[4]!;
        const streamId = buffer.readUInt32BE(5) & 0x7fffffff;
        buffer = buffer.subarray(9 + length);
        if (type === TYPE.settings && (flags & ACK) === 0)
          socket.write(frameBytes(TYPE.settings, ACK, 0, new Uint8Array(0)));
        if (type === TYPE.ping && (flags & ACK) !== 0 && resetOnPingAck) {
          socket.resetAndDestroy();
          return;
        }
        if (type !== TYPE.headers) continue;
        const frames = framesFor();
        const reset = frames.findIndex((frame) => frame.type === "tcp_reset");
        const written = (reset < 0 ? frames : frames.slice(0, reset)) as Exclude<Frame, { type: "tcp_reset" }>[];
        const bytes = written.map((frame) => encode(frame, streamId, nextPushId));
        if (reset >= 0) {
          bytes.push(frameBytes(TYPE.ping, 0, 0, new Uint8Array(8)));
          resetOnPingAck = true;
        }
        socket.write(Buffer.concat(bytes));
      }
    });
  });
  const tracked = trackSockets(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    answer: (next) => {
      framesFor = typeof next === "function" ? next : () => next;
    },
    get openSockets() {
      return tracked.sockets.size;
    },
    allClosed: (timeoutMs) => tracked.allClosed(timeoutMs),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of tracked.sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
