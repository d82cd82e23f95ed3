// Backends on 127.0.0.1 (port 0) that misbehave, each counting the TCP connections it holds open so a test can tell
// that the client closed every one: an HTTP/2 server whose every stream the test answers by hand (and whose raw
// sockets it can reset), an HTTP/2 server with chosen SETTINGS, and a TCP server that never speaks.
import * as http2 from "node:http2";
import * as net from "node:net";

export interface HostileBackend {
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  /** TCP connections accepted so far. */
  readonly accepted: number;
  /** TCP connections accepted and not yet closed. */
  readonly openSockets: number;
  /** The TCP connections accepted and still open (to reset one with `resetAndDestroy()`). */
  readonly sockets: ReadonlySet<net.Socket>;
  /** Resolves once no accepted connection is open; rejects after `timeoutMs` saying how many are. */
  allClosed(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Counts the sockets `server` accepts and tells when none is open. */
export function trackSockets(server: net.Server) {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  let waiters: (() => void)[] = [];
  // Before the server's own listener, which makes the HTTP/2 session of the connection.
  server.prependListener("connection", (socket: net.Socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => {
      sockets.delete(socket);
      if (sockets.size > 0) return;
      const current = waiters;
      waiters = [];
      for (const resolve of current) resolve();
    });
  });
  return {
    sockets,
    get accepted() {
      return accepted;
    },
    allClosed(timeoutMs = 5_000): Promise<void> {
      if (sockets.size === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${sockets.size} TCP connection(s) still open after ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

async function listen(server: net.Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

function backendOf(server: net.Server, address: string, tracked: ReturnType<typeof trackSockets>): HostileBackend {
  return {
    address,
    get accepted() {
      return tracked.accepted;
    },
    get openSockets() {
      return tracked.sockets.size;
    },
    sockets: tracked.sockets,
    allClosed: (timeoutMs) => tracked.allClosed(timeoutMs),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of tracked.sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Answers one request stream; `socket` is the raw TCP connection it came on, `headers` the request's. */
export type StreamHandler = (
  stream: http2.ServerHttp2Stream,
  socket: net.Socket,
  headers: http2.IncomingHttpHeaders,
) => void;

/**
 * A node:http2 server whose every stream goes to `onStream` (after the request body ended), advertising `settings`.
 */
export async function startHttp2Backend(
  onStream: StreamHandler,
  settings: http2.Settings = {},
): Promise<HostileBackend> {
  const server = http2.createServer({ settings });
  const tracked = trackSockets(server);
  const socketOf = new WeakMap<http2.Http2Session, net.Socket>();
  const pending: net.Socket[] = [];
  server.prependListener("connection", (socket: net.Socket) => pending.push(socket));
  server.on("session", (session) => {
    session.on("error", () => {});
    const socket = pending.shift();
    if (socket !== undefined) socketOf.set(session, socket);
  });
  server.on("stream", (stream, headers) => {
    stream.on("error", () => {});
    stream.resume();
    stream.on("end", () => {
      if (!stream.destroyed) onStream(stream, socketOf.get(stream.session!)!, headers);
    });
  });
  const address = await listen(server);
  return backendOf(server, address, tracked);
}

/** A TCP server that accepts connections and never sends a byte (no HTTP/2 SETTINGS). */
export async function startSilentBackend(): Promise<HostileBackend> {
  const server = net.createServer((socket) => socket.resume());
  const tracked = trackSockets(server);
  const address = await listen(server);
  return backendOf(server, address, tracked);
}

/** The response headers of a gRPC answer. */
export const GRPC_HEADERS = { ":status": 200, "content-type": "application/grpc" } as const;

/** Answers a call with one message (its serialized bytes) and status OK. */
export function answerOk(stream: http2.ServerHttp2Stream, message: Uint8Array): void {
  stream.respond(GRPC_HEADERS, { waitForTrailers: true });
  stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
  stream.end(Buffer.concat([lengthPrefix(message.length), message]));
}

/** A gRPC length prefix claiming `length` bytes, uncompressed. */
export function lengthPrefix(length: number): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(length, 1);
  return prefix;
}
