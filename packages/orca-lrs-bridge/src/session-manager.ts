// The HTTP/2 connection behind the bridge's own transports (to an LRS server, to a backend's ORCA service): one
// session at a time to one authority, dialled on first use and again once it failed, closed or was sent GOAWAY.
// Invariants (docs/orca-lrs.md#connections):
// - Every session has an 'error' listener from the moment it is created until it is gone, so a peer that answers
//   with bytes that are not HTTP/2, resets, or breaks the protocol fails the calls on it, never the process.
// - A session carries calls only once the server's SETTINGS arrived (the HTTP/2 handshake, as gRPC C-core waits for
//   before a subchannel is READY): a server that does not speak HTTP/2 fails the call with UNAVAILABLE, and the
//   client's usual retry takes over.
// - A session keeps the process alive only while it is connecting or carries a call; idle, it is unref'd and closed
//   after `idleTimeoutMs`. While calls are open and nothing was read for `pingIntervalMs`, a PING checks the
//   connection; unanswered after `pingTimeoutMs`, the session is destroyed.
import * as http2 from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import { clearLongTimer, type LongTimer, setLongTimeout } from "./long-timer.js";

export interface SessionManagerOptions {
  /** `http://host:port` or `https://host:port`. */
  readonly baseUrl: string;
  /** Passed to `http2.connect` (TLS files, for instance). */
  readonly sessionOptions?: http2.SecureClientSessionOptions;
  /** How long a session may take to finish the HTTP/2 handshake. Default 20,000 (gRPC's minimum connect timeout). */
  readonly connectTimeoutMs?: number;
  /** Default 60,000. */
  readonly pingIntervalMs?: number;
  /** Default 20,000. */
  readonly pingTimeoutMs?: number;
  /** Default 900,000. */
  readonly idleTimeoutMs?: number;
}

/** What connect-node's HTTP/2 client asks of a session manager (its `NodeHttp2ClientSessionManager`). */
export interface SessionManager {
  readonly authority: string;
  request(
    method: string,
    path: string,
    headers: http2.OutgoingHttpHeaders,
    options: Omit<http2.ClientSessionRequestOptions, "signal">,
  ): Promise<http2.ClientHttp2Stream>;
  notifyResponseByteRead(stream: http2.ClientHttp2Stream): void;
  /** Destroys every session (their calls fail); a later request dials again. */
  abort(): void;
}

interface Connection {
  readonly session: http2.ClientHttp2Session;
  /** Settles once the handshake completed (resolves) or the session failed before it (rejects). */
  readonly ready: Promise<void>;
  usable: boolean;
  failure: Error | undefined;
  streams: number;
  readSincePing: boolean;
  pingTimer: LongTimer | undefined;
  idleTimer: LongTimer | undefined;
}

export function createSessionManager(options: SessionManagerOptions): SessionManager {
  const authority = new URL(options.baseUrl).origin;
  const connectTimeoutMs = options.connectTimeoutMs ?? 20_000;
  const pingIntervalMs = options.pingIntervalMs ?? 60_000;
  const pingTimeoutMs = options.pingTimeoutMs ?? 20_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 900_000;
  const connections = new Set<Connection>();
  const bySession = new WeakMap<http2.Http2Session, Connection>();
  let current: Connection | undefined;

  const unavailable = (what: string, cause?: unknown) =>
    new ConnectError(
      `${what} (${authority})${cause instanceof Error ? `: ${cause.message}` : ""}`,
      Code.Unavailable,
      undefined,
      undefined,
      cause,
    );

  function dial(): Connection {
    const session = http2.connect(authority, options.sessionOptions ?? {});
    let settle: { resolve(): void; reject(error: unknown): void } | undefined;
    const ready = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    ready.catch(() => {}); // read by the requests that wait on it
    const conn: Connection = {
      session,
      ready,
      usable: true,
      failure: undefined,
      streams: 0,
      readSincePing: false,
      pingTimer: undefined,
      idleTimer: undefined,
    };
    const handshakeTimer = unrefTimer(() => {
      session.destroy(unavailable(`no HTTP/2 handshake within ${connectTimeoutMs} ms`));
    }, connectTimeoutMs);
    // Never removed: whatever the peer does later, its error lands here.
    session.on("error", (error: Error) => {
      conn.failure ??= error;
      conn.usable = false;
    });
    session.once("remoteSettings", () => {
      clearLongTimer(handshakeTimer);
      settle?.resolve();
    });
    session.on("goaway", () => {
      conn.usable = false;
    });
    session.once("close", () => {
      clearLongTimer(handshakeTimer);
      conn.usable = false;
      stopTimers(conn);
      connections.delete(conn);
      if (current === conn) current = undefined;
      settle?.reject(unavailable("connection failed before the HTTP/2 handshake", conn.failure));
    });
    connections.add(conn);
    bySession.set(session, conn);
    return conn;
  }

  function stopTimers(conn: Connection): void {
    clearLongTimer(conn.pingTimer);
    clearLongTimer(conn.idleTimer);
    conn.pingTimer = conn.idleTimer = undefined;
  }

  /** While calls are open: a PING when nothing was read for a whole interval. */
  function schedulePing(conn: Connection): void {
    conn.pingTimer = unrefTimer(() => {
      if (conn.streams === 0 || conn.session.destroyed) return;
      if (conn.readSincePing) {
        conn.readSincePing = false;
        schedulePing(conn);
        return;
      }
      const deadline = unrefTimer(() => {
        conn.session.destroy(unavailable(`PING unanswered for ${pingTimeoutMs} ms`));
      }, pingTimeoutMs);
      try {
        conn.session.ping((error) => {
          clearLongTimer(deadline);
          if (error === null && conn.streams > 0) schedulePing(conn);
        });
      } catch {
        clearLongTimer(deadline); // the session is closing; its calls end with it
      }
    }, pingIntervalMs);
  }

  function track(conn: Connection, stream: http2.ClientHttp2Stream): void {
    if (conn.streams++ === 0) {
      clearLongTimer(conn.idleTimer);
      conn.idleTimer = undefined;
      conn.session.ref();
      conn.readSincePing = false;
      schedulePing(conn);
    }
    stream.once("close", () => {
      if (--conn.streams > 0) return;
      stopTimers(conn);
      if (conn.session.destroyed) return;
      conn.session.unref();
      conn.idleTimer = unrefTimer(() => {
        conn.usable = false;
        conn.session.close();
      }, idleTimeoutMs);
    });
  }

  return {
    authority,
    async request(method, path, headers, requestOptions) {
      // A session that closes between its handshake and this request gets one more dial, not a loop.
      for (let attempt = 0; ; attempt++) {
        if (!current?.usable) current = dial();
        const conn = current;
        await conn.ready;
        if (conn.usable && !conn.session.closed && !conn.session.destroyed) {
          try {
            const stream = conn.session.request({ ...headers, ":method": method, ":path": path }, requestOptions);
            track(conn, stream);
            return stream;
          } catch (error) {
            conn.usable = false;
            if (attempt > 0) throw unavailable("the HTTP/2 session refused a new stream", error);
            continue;
          }
        }
        conn.usable = false;
        if (attempt > 0) throw unavailable("the HTTP/2 session closed before the call started", conn.failure);
      }
    },
    notifyResponseByteRead(stream) {
      const conn = bySession.get(stream.session as http2.Http2Session);
      if (conn !== undefined) conn.readSincePing = true;
    },
    abort() {
      current = undefined;
      for (const conn of connections) {
        conn.usable = false;
        stopTimers(conn);
        conn.session.destroy(undefined, http2.constants.NGHTTP2_CANCEL);
      }
    },
  };
}

/** An unref'd timer for a delay from the options: any length (docs/decisions.md#long-timers). */
function unrefTimer(callback: () => void, ms: number): LongTimer {
  const timer = setLongTimeout(callback, ms);
  timer.unref();
  return timer;
}
