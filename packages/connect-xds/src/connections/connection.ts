// One HTTP/2 connection to one backend address, with gRPC's subchannel states (docs/decisions.md#connect-xds-connections):
// IDLE --requestConnection--> CONNECTING --server SETTINGS--> READY --GOAWAY / close / error--> IDLE
//                             CONNECTING --error / close / connect deadline--> TRANSIENT_FAILURE --backoff--> IDLE
// The connect deadline is max(20 s, this attempt's backoff); the next attempt starts no earlier than the backoff
// after this one started (gRPC's connection backoff). Every session and socket gets an 'error' listener before
// anything else and keeps it for its whole life, so a backend that is not HTTP/2 only fails its connection.
import * as http2 from "node:http2";
import * as net from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import type { GrpcTransportOptions } from "@connectrpc/connect-node";
import { type Backoff, type Clock, createBackoff } from "@xdskit/orca-lrs-bridge";
import type { ConnectivityState } from "../balancer/lb-policy.js";
import { MIN_CONNECT_TIMEOUT_MS } from "./constants.js";
import { normalizeGrpcMessage } from "./grpc-message.js";
import { isTooManyPings, type KeepaliveConfig, startKeepalive } from "./keepalive.js";

/** Opens the HTTP/2 session to `authority` (`http://host:port`). Tests substitute their own. */
export type Dialer = (authority: string, host: string, port: number) => http2.ClientHttp2Session;

const ignore = (): void => {};

/** The open streams of each session, in the order they were opened (nghttp2 sends queued ones in that order). */
const openStreams = new WeakMap<http2.ClientHttp2Session, Set<http2.ClientHttp2Stream>>();
/** Sessions we stopped using: each closes once its last stream has ended. */
const draining = new WeakSet<http2.ClientHttp2Session>();
/** Sessions that went away with streams still open, whose queued streams were marked as never sent. */
const classified = new WeakSet<http2.ClientHttp2Session>();
/** Streams a server's SETTINGS_MAX_CONCURRENT_STREAMS kept queued when their session went away. */
const queuedAtLoss = new WeakSet<http2.ClientHttp2Stream>();
/** Each session's last SETTINGS_MAX_CONCURRENT_STREAMS from the server (a destroyed session no longer tells). */
const streamLimits = new WeakMap<http2.ClientHttp2Session, number>();

/**
 * The open streams of `session` past the server's SETTINGS_MAX_CONCURRENT_STREAMS, in opening order: nghttp2
 * sends a queued stream's HEADERS only when an earlier stream ends, so these were never sent.
 */
function queuedStreams(session: http2.ClientHttp2Session): http2.ClientHttp2Stream[] {
  const streams = openStreams.get(session);
  if (streams === undefined) return [];
  const limit = streamLimits.get(session) ?? Number.POSITIVE_INFINITY;
  return [...streams].slice(Math.min(limit, streams.size));
}

/** Why a session was ended by us while it had streams (a keepalive PING not acknowledged): their calls say it. */
const endedBecause = new WeakMap<http2.ClientHttp2Session, Error>();

/**
 * Stops new streams on `session` and closes it when its last stream ends. Closing at once would make nghttp2 refuse
 * (REFUSED_STREAM) a stream created in this tick whose HEADERS frame is not yet written. Streams the server's
 * SETTINGS_MAX_CONCURRENT_STREAMS keeps queued (never sent) fail at once, not sent: nothing else would ever end
 * them, and the session with them (docs/decisions.md#connect-xds-connections).
 */
function drain(session: http2.ClientHttp2Session, address: string): void {
  if (session.closed || session.destroyed || draining.has(session)) return;
  draining.add(session);
  const streams = openStreams.get(session);
  for (const stream of queuedStreams(session)) {
    streams?.delete(stream);
    stream.destroy(notSentError(`the connection to ${address} closed before the call was sent`));
  }
  if (streams === undefined || streams.size === 0) session.close();
}

/** Marks a call that never reached the connection: the call path may pick again (gRPC's transparent retry). */
export const NOT_SENT: unique symbol = Symbol("xdskit.connect-xds.not-sent");

/** An UNAVAILABLE error for a call whose connection ended under it (it may have reached the server). */
function lostConnectionError(message: string): ConnectError {
  return new ConnectError(message, Code.Unavailable);
}

export function notSentError(message: string): ConnectError {
  const error = new ConnectError(message, Code.Unavailable);
  (error as ConnectError & { [NOT_SENT]?: true })[NOT_SENT] = true;
  return error;
}

export const dialCleartext: Dialer = (authority, host, port) =>
  http2.connect(authority, {
    // A client takes no pushed streams (gRPC uses none): a PUSH_PROMISE is a protocol error that fails the
    // connection, instead of a stream nobody reads keeping it open.
    settings: { enablePush: false },
    createConnection: () => {
      const socket = net.connect({ host, port });
      socket.on("error", ignore);
      socket.setNoDelay(true);
      return socket;
    },
  });

export interface ConnectionOptions {
  /** `host:port`, IPv6 in brackets. */
  readonly address: string;
  readonly clock: Clock;
  readonly random: () => number;
  readonly dial?: Dialer;
  readonly minConnectTimeoutMs?: number;
  readonly backoff?: Backoff;
  /** Called after every state change. */
  readonly onStateChange: (state: ConnectivityState) => void;
  /** A8 keepalive pings on each READY session (keepalive.ts); none when undefined. */
  readonly keepalive?: KeepaliveConfig;
  /** The dialer speaks TLS: the session's origin (and every call's `:scheme`) is `https`. */
  readonly secure?: boolean;
}

/** Splits `host:port` / `[v6]:port`. */
export function splitAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(":");
  const host = address.slice(0, colon);
  return { host: host.startsWith("[") ? host.slice(1, -1) : host, port: Number(address.slice(colon + 1)) };
}

/** connect-node's session-manager interface (not exported by name). */
export type SessionManager = NonNullable<GrpcTransportOptions["sessionManager"]>;

export class Http2Connection implements SessionManager {
  readonly authority: string;
  state: ConnectivityState = "IDLE";
  lastError: Error | undefined;
  /** The session calls go to: set from the server's SETTINGS until the session is lost. */
  private session: http2.ClientHttp2Session | undefined;
  /** The session being established. */
  private pending: http2.ClientHttp2Session | undefined;
  private timer: unknown;
  private closed = false;
  private readonly host: string;
  private readonly port: number;
  private readonly dial: Dialer;
  private readonly backoff: Backoff;
  private readonly minConnectTimeoutMs: number;
  /** A8: the keepalive time, doubled for each GOAWAY "too_many_pings". */
  private keepaliveTimeMs: number;
  private stopKeepalive: (() => void) | undefined;

  constructor(readonly options: ConnectionOptions) {
    this.keepaliveTimeMs = options.keepalive?.timeMs ?? 0;
    const { host, port } = splitAddress(options.address);
    this.host = host;
    this.port = port;
    // The URL origin, as connect-node compares it with each request URL (IPv6 normalised).
    this.authority = new URL(`${options.secure === true ? "https" : "http"}://${options.address}`).origin;
    this.dial = options.dial ?? dialCleartext;
    this.backoff = options.backoff ?? createBackoff({}, options.random);
    this.minConnectTimeoutMs = options.minConnectTimeoutMs ?? MIN_CONNECT_TIMEOUT_MS;
  }

  requestConnection(): void {
    if (this.state !== "IDLE" || this.closed) return;
    const { clock } = this.options;
    const delayMs = this.backoff.next();
    const attemptStart = clock.now();
    this.setState("CONNECTING");
    let session: http2.ClientHttp2Session;
    try {
      session = this.dial(this.authority, this.host, this.port);
    } catch (error) {
      this.failAttempt(error as Error, attemptStart + delayMs);
      return;
    }
    this.pending = session;
    session.on("error", (error: Error) => this.onLost(session, error, attemptStart + delayMs));
    // A dialer that did not turn push off: pushed streams are refused.
    session.on("stream", (pushed: http2.ClientHttp2Stream) => pushed.close(http2.constants.NGHTTP2_REFUSED_STREAM));
    session.on("close", () => this.onLost(session, new Error("connection closed"), attemptStart + delayMs));
    session.on("goaway", (code: number, _lastStreamId: number, opaqueData?: Buffer) => {
      if (isTooManyPings(code, opaqueData)) this.keepaliveTimeMs = Math.min(this.keepaliveTimeMs * 2, 0x7fff_ffff);
      this.onLost(session, new Error(`GOAWAY (code ${code})`), 0);
    });
    session.on("remoteSettings", (settings: http2.Settings) => {
      if (settings.maxConcurrentStreams !== undefined) streamLimits.set(session, settings.maxConcurrentStreams);
    });
    session.once("remoteSettings", () => {
      if (this.pending !== session) return;
      this.pending = undefined;
      clock.clearTimeout(this.timer);
      this.backoff.reset();
      this.session = session;
      this.lastError = undefined;
      this.keepSessionAlive(session);
      this.setState("READY");
    });
    this.timer = clock.setTimeout(
      () => {
        if (this.pending !== session) return;
        session.destroy();
        this.onLost(session, new Error("connect deadline exceeded"), attemptStart + delayMs);
      },
      Math.max(delayMs, this.minConnectTimeoutMs),
    );
  }

  /** A8: pings on the READY session; one unanswered destroys it (its calls fail UNAVAILABLE, naming why). */
  private keepSessionAlive(session: http2.ClientHttp2Session): void {
    const keepalive = this.options.keepalive;
    if (keepalive === undefined) return;
    this.stopKeepalive = startKeepalive(
      session,
      this.options.clock,
      { ...keepalive, timeMs: this.keepaliveTimeMs },
      () => (openStreams.get(session)?.size ?? 0) > 0,
      (error) => {
        endedBecause.set(session, error);
        this.onLost(session, error, 0);
        session.destroy();
      },
    );
  }

  /** A session failed or ended: while connecting, a failed attempt; while READY, back to IDLE. */
  private onLost(session: http2.ClientHttp2Session, error: Error, nextAttemptAt: number): void {
    if (session === this.session) {
      this.stopKeepalive?.();
      this.stopKeepalive = undefined;
    }
    if (session === this.pending) {
      this.pending = undefined;
      this.options.clock.clearTimeout(this.timer);
      if (!session.destroyed) session.destroy();
      this.failAttempt(error, nextAttemptAt);
    } else if (session === this.session) {
      // In-flight streams on it finish or fail on their own; new calls need a new connection.
      this.session = undefined;
      drain(session, this.options.address);
      this.lastError = error;
      if (!this.closed) this.setState("IDLE");
    }
  }

  private failAttempt(error: Error, nextAttemptAt: number): void {
    this.lastError = error;
    if (this.closed) return;
    this.setState("TRANSIENT_FAILURE");
    const { clock } = this.options;
    this.timer = clock.setTimeout(
      () => {
        if (!this.closed && this.state === "TRANSIENT_FAILURE") this.setState("IDLE");
      },
      Math.max(0, nextAttemptAt - clock.now()),
    );
  }

  private setState(state: ConnectivityState): void {
    if (this.state === state) return;
    this.state = state;
    this.options.onStateChange(state);
  }

  /** connect-node's hook: a stream on the READY session (calls are only sent to READY connections). */
  request(
    method: string,
    path: string,
    headers: http2.OutgoingHttpHeaders,
    options: Omit<http2.ClientSessionRequestOptions, "signal">,
  ): Promise<http2.ClientHttp2Stream> {
    try {
      return Promise.resolve(this.openStream({ ...headers, ":method": method, ":path": path }, options));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * A stream on the READY session, `headers` with `:method` and `:path` (the lean unary call's way in, without
   * request()'s copy and promise). Throws a not-sent error when the connection cannot take the stream.
   */
  openStream(
    headers: http2.OutgoingHttpHeaders,
    options?: Omit<http2.ClientSessionRequestOptions, "signal">,
  ): http2.ClientHttp2Stream {
    const session = this.session;
    if (session === undefined || session.closed || session.destroyed) {
      throw notSentError(`connection to ${this.options.address} is not ready`);
    }
    let stream: http2.ClientHttp2Stream;
    try {
      stream = session.request(headers, options);
    } catch (error) {
      throw notSentError(`connection to ${this.options.address} refused a new stream: ${String(error)}`);
    }
    // connect-node adds its own listener a tick later; this one covers the gap.
    stream.on("error", ignore);
    // connect-node fails a call on 'close' only for reset codes it maps to an error, so two endings would leave the
    // call waiting for its deadline (docs/decisions.md#connect-xds-connections); gRPC fails both UNAVAILABLE:
    // - the server closed the stream with NO_ERROR before any response headers (a server shutting down);
    // - the connection went away under the stream (NO_ERROR or CANCEL, no trailers), which connect-node would
    //   report as nothing or as CANCELLED.
    // A call the caller cancels has already failed with its own error (connect-node's first error wins), so the
    // error emitted here changes nothing for it. (`on`, not `once`: each event comes at most once per stream.)
    // These listeners come before the call's: a grpc-message that is not valid percent-encoding is rewritten in
    // the headers (or trailers) object the call's listeners get, for connect's strict decoding (grpc-message.ts).
    let responded = false;
    let finished = false;
    stream.on("response", (headers: http2.IncomingHttpHeaders) => {
      responded = true;
      normalizeGrpcMessage(headers);
    });
    stream.on("trailers", (trailers: http2.IncomingHttpHeaders) => {
      finished = true;
      normalizeGrpcMessage(trailers);
    });
    let streams = openStreams.get(session);
    if (streams === undefined) {
      streams = new Set();
      openStreams.set(session, streams);
    }
    streams.add(stream);
    stream.on("close", () => {
      const code = stream.rstCode;
      const { NGHTTP2_NO_ERROR, NGHTTP2_CANCEL } = http2.constants;
      const why = endedBecause.get(session);
      const gone = session.closed || session.destroyed;
      // The first stream to close with its session gone marks those still queued then (before any of them closes
      // and shifts the order): a call on one never reached the server, and the call path may send it again.
      if (gone && !classified.has(session)) {
        classified.add(session);
        for (const queued of queuedStreams(session)) queuedAtLoss.add(queued);
      }
      if (finished) {
        // Ended with its trailers.
      } else if (why !== undefined) {
        stream.emit(
          "error",
          queuedAtLoss.has(stream)
            ? notSentError(`the connection to ${this.options.address} closed before the call was sent (${why.message})`)
            : lostConnectionError(
                `the connection to ${this.options.address} ended before the call did (${why.message})`,
              ),
        );
      } else if (!responded && code === NGHTTP2_NO_ERROR) {
        stream.emit(
          "error",
          lostConnectionError(`${this.options.address} closed the stream before responding (HTTP/2 NO_ERROR)`),
        );
      } else if ((code === NGHTTP2_NO_ERROR || code === NGHTTP2_CANCEL) && gone) {
        stream.emit(
          "error",
          queuedAtLoss.has(stream)
            ? notSentError(`the connection to ${this.options.address} closed before the call was sent`)
            : lostConnectionError(`the connection to ${this.options.address} ended before the call did`),
        );
      }
      const open = openStreams.get(session);
      open?.delete(stream);
      if (draining.has(session) && (open?.size ?? 0) === 0 && !session.closed && !session.destroyed) {
        session.close();
      }
    });
    return stream;
  }

  notifyResponseByteRead(): void {}

  /**
   * A9: the transport went idle. The session closes once its streams are done (a connection attempt stops) and the
   * connection is IDLE, ready to connect again when asked.
   */
  disconnect(): void {
    if (this.closed) return;
    this.options.clock.clearTimeout(this.timer);
    const pending = this.pending;
    this.pending = undefined;
    if (pending !== undefined && !pending.destroyed) pending.destroy();
    const session = this.session;
    this.session = undefined;
    this.stopKeepalive?.();
    this.stopKeepalive = undefined;
    if (session !== undefined) drain(session, this.options.address);
    this.setState("IDLE");
  }

  /** Stops reconnecting; the sessions close once their streams are done. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.options.clock.clearTimeout(this.timer);
    this.stopKeepalive?.();
    const pending = this.pending;
    this.pending = undefined;
    if (pending !== undefined && !pending.destroyed) pending.destroy();
    const session = this.session;
    this.session = undefined;
    if (session !== undefined) drain(session, this.options.address);
  }
}
