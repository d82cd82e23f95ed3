// Every accepted TCP connection, from accept to close (A36, A29):
// 1. not serving: closed at once, before any byte is written;
// 2. the filter chain: the Listener's most specific match for the connection's addresses (IPv4-mapped IPv6
//    addresses read as IPv4), else its default chain, else closed at once, with no bytes;
// 3. the chain's DownstreamTlsContext (or the fallback credentials) runs the TLS handshake on its own TLSSocket,
//    ALPN `h2` only; a client certificate that was presented must verify, required or not;
// 4. the connection is handed to the one HTTP/2 server, with its chain and its two ends for the calls to read.
// Until the client's HTTP/2 SETTINGS arrive (the connection preface), a connection is pending: one that completes
// neither TLS nor the preface in `handshakeTimeoutMs` is closed, and at most `maxPendingConnections` are pending at
// once (a new one closes the oldest), so connections that send nothing hold a bounded amount of memory however fast
// they come.
import type { Http2Server, Http2Session } from "node:http2";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { principalNamesOf, selectFilterChain } from "@xdskit/xds-client";
import type { ConnectionContext, Generation, ServerConnection } from "../config/generation.js";
import type { ServerLogger } from "../logging.js";
import { clearLongTimer, type LongTimer, setLongTimeout } from "../long-timer.js";
import { goawayTwoPhase } from "./drain.js";
import { unmapIpv4 } from "./ip.js";
import type { TlsTerminator, TlsTerminators } from "./tls-terminators.js";

export interface AcceptorOptions {
  /** The generation connections are accepted under now; undefined while not serving. */
  readonly activeGeneration: () => Generation | undefined;
  readonly http2Server: Http2Server;
  readonly tls: TlsTerminators;
  /** TLS for chains without a `transport_socket`; undefined: plaintext. */
  readonly fallbackTls: TlsTerminator | undefined;
  readonly handshakeTimeoutMs: number;
  /** At most this many connections before their HTTP/2 preface; a new one past it closes the oldest. */
  readonly maxPendingConnections: number;
  readonly logger: ServerLogger;
}

export interface Acceptor {
  /** The net.Server's `connection` listener. */
  accept(socket: Socket): void;
  /** The context of an HTTP/2 session this acceptor handed over. */
  contextOf(session: Http2Session): ConnectionContext | undefined;
  /** Connections not yet closed, in any phase. */
  readonly openConnections: number;
  /** Drains every connection (GOAWAY, forced after graceMs); resolves when all are closed. */
  closeAll(graceMs: number): Promise<void>;
}

interface Connection extends ServerConnection, ConnectionContext {
  /** Gains the principal names when its TLS handshake completes. */
  peer: ConnectionContext["peer"];
  phase: "handshake" | "http2" | "closed";
  /** The outermost stream: the TLSSocket, or the TCP socket in plaintext. */
  stream: Socket;
  session: Http2Session | undefined;
  handshakeTimer: LongTimer | undefined;
  /** While draining: when it is closed by force (infinity when it is not draining), and that timer. */
  forceAt: number;
  forceTimer: LongTimer | undefined;
}

export function createAcceptor(options: AcceptorOptions): Acceptor {
  const { http2Server, logger } = options;
  const contexts = new WeakMap<Http2Session, Connection>();
  const open = new Set<Connection>();
  /** Connections before their HTTP/2 preface, oldest first (a Set iterates in insertion order). */
  const pending = new Set<Connection>();
  /** Set when the limit closed a connection, cleared once none is pending: one warning per episode. */
  let pendingLimitHit = false;
  const closeWaiters: (() => void)[] = [];
  /** The connection whose stream is being handed to the HTTP/2 server (its `session` event runs synchronously). */
  let handingOver: Connection | undefined;
  /** The last TLS set-up error logged, to log each problem once rather than per connection. */
  let lastTlsProblem: string | undefined;

  http2Server.on("session", (session: Http2Session) => {
    const connection = handingOver;
    if (connection === undefined) {
      session.destroy();
      return;
    }
    connection.session = session;
    contexts.set(session, connection);
    session.on("error", (error) =>
      logger.debug(() => `connection from ${connection.peer.ip}:${connection.peer.port}: ${error.message}`),
    );
    session.once("remoteSettings", () => {
      clearLongTimer(connection.handshakeTimer);
      connection.handshakeTimer = undefined;
      settled(connection);
    });
  });

  /** The connection is no longer pending (its preface arrived, or it closed). */
  function settled(connection: Connection): void {
    pending.delete(connection);
    if (pending.size === 0) pendingLimitHit = false;
  }

  /** Adds a pending connection; past the limit, closes the oldest one. */
  function addPending(connection: Connection): void {
    pending.add(connection);
    if (pending.size <= options.maxPendingConnections) return;
    const oldest = pending.values().next().value as Connection;
    settled(oldest);
    if (!pendingLimitHit) {
      logger.warn(
        `${options.maxPendingConnections} connections have not sent their HTTP/2 preface yet: closing the oldest as new ones come`,
      );
    }
    pendingLimitHit = true;
    logger.debug(() => `connection from ${oldest.peer.ip}:${oldest.peer.port} closed: too many pending connections`);
    oldest.stream.destroy();
  }

  function closed(connection: Connection, generation: Generation): void {
    if (connection.phase === "closed") return;
    connection.phase = "closed";
    settled(connection);
    clearLongTimer(connection.handshakeTimer);
    clearLongTimer(connection.forceTimer);
    open.delete(connection);
    generation.removeConnection(connection);
    if (open.size === 0) for (const resolve of closeWaiters.splice(0)) resolve();
  }

  function startHttp2(connection: Connection): void {
    if (connection.phase !== "handshake") return;
    handingOver = connection;
    try {
      http2Server.emit("connection", connection.stream);
    } finally {
      handingOver = undefined;
    }
    if (connection.session === undefined) {
      connection.stream.destroy();
      return;
    }
    connection.phase = "http2";
    // Drained while in its handshake: it completes, then drains at once (no connection fails for a drain).
    if (connection.forceAt !== Number.POSITIVE_INFINITY) goawayTwoPhase(connection.session);
  }

  function startTls(connection: Connection, terminator: TlsTerminator): void {
    terminator.secure(connection.stream, (tlsSocket) => {
      if (connection.phase !== "handshake") {
        tlsSocket.destroy();
        return;
      }
      connection.stream = tlsSocket;
      tlsSocket.on("error", (error) =>
        logger.debug(() => `connection from ${connection.peer.ip}:${connection.peer.port}: ${error.message}`),
      );
      const refusal = checkHandshake(tlsSocket, terminator);
      if (refusal !== undefined) {
        logger.debug(() => `TLS with ${connection.peer.ip}:${connection.peer.port} refused: ${refusal}`);
        tlsSocket.destroy();
        return;
      }
      connection.peer = {
        ...connection.peer,
        principalNames: principalNamesOf(tlsSocket.getPeerX509Certificate()),
      };
      startHttp2(connection);
    });
  }

  function accept(socket: Socket): void {
    const generation = options.activeGeneration();
    const localIp = unmapIpv4(socket.localAddress);
    const remoteIp = unmapIpv4(socket.remoteAddress);
    const { localPort, remotePort } = socket;
    if (
      generation === undefined ||
      localIp === undefined ||
      remoteIp === undefined ||
      localPort === undefined ||
      remotePort === undefined
    ) {
      socket.destroy();
      return;
    }
    const chain = selectFilterChain(generation.listener, { localIp, remoteIp, remotePort });
    const runtime = chain === undefined ? undefined : generation.runtimeOf(chain);
    if (runtime === undefined) {
      logger.debug(
        () =>
          `no filter chain matches the connection from ${remoteIp}:${remotePort} to ${localIp}:${localPort}: closed`,
      );
      socket.destroy();
      return;
    }
    let terminator = options.fallbackTls;
    if (runtime.chain.tls !== undefined) {
      const found = options.tls.forChain(runtime.chain.tls);
      if ("error" in found) {
        if (found.error !== lastTlsProblem) logger.warn(`TLS connections refused: ${found.error}`);
        lastTlsProblem = found.error;
        socket.destroy();
        return;
      }
      lastTlsProblem = undefined;
      terminator = found;
    }
    const connection: Connection = {
      runtime,
      peer: { ip: remoteIp, port: remotePort, principalNames: undefined },
      local: { ip: localIp, port: localPort },
      phase: "handshake",
      stream: socket,
      session: undefined,
      handshakeTimer: undefined,
      forceAt: Number.POSITIVE_INFINITY,
      forceTimer: undefined,
      drain(graceMs) {
        if (connection.phase === "closed") return;
        if (graceMs <= 0) {
          connection.session?.destroy();
          connection.stream.destroy();
          return;
        }
        // Drained again (close() after a Listener change): the earlier force deadline wins.
        const forceAt = Date.now() + graceMs;
        if (forceAt >= connection.forceAt) return;
        connection.forceAt = forceAt;
        clearLongTimer(connection.forceTimer);
        connection.forceTimer = setLongTimeout(() => {
          connection.session?.destroy();
          connection.stream.destroy();
        }, graceMs);
        connection.forceTimer.unref();
        if (connection.session !== undefined) goawayTwoPhase(connection.session);
      },
    };
    open.add(connection);
    generation.addConnection(connection);
    addPending(connection);
    connection.handshakeTimer = setLongTimeout(() => {
      logger.debug(
        () =>
          `connection from ${remoteIp}:${remotePort} sent no HTTP/2 preface in ${options.handshakeTimeoutMs} ms: closed`,
      );
      connection.stream.destroy();
    }, options.handshakeTimeoutMs);
    connection.handshakeTimer.unref();
    socket.on("error", (error) => logger.debug(() => `connection from ${remoteIp}:${remotePort}: ${error.message}`));
    // The TCP socket closes with its TLS socket too.
    socket.once("close", () => closed(connection, generation));
    if (terminator === undefined) startHttp2(connection);
    else startTls(connection, terminator);
  }

  return {
    accept,
    contextOf: (session) => contexts.get(session),
    get openConnections() {
      return open.size;
    },
    closeAll(graceMs) {
      for (const connection of [...open]) connection.drain(graceMs);
      if (open.size === 0) return Promise.resolve();
      return new Promise((resolve) => closeWaiters.push(resolve));
    },
  };
}

/**
 * Why a completed handshake is refused, if it is: ALPN other than h2, or a client certificate that was presented
 * and does not verify (A29: verified whenever presented; required or not, only an absent one may pass).
 */
function checkHandshake(socket: TLSSocket, terminator: TlsTerminator): string | undefined {
  if (socket.alpnProtocol !== "h2") return `the client did not negotiate h2 with ALPN (${String(socket.alpnProtocol)})`;
  if (!terminator.requestCert || socket.authorized) return undefined;
  const presented = Object.keys(socket.getPeerCertificate()).length > 0;
  if (presented) return `the client certificate does not verify: ${String(socket.authorizationError)}`;
  return terminator.requireClientCertificate ? "the client presented no certificate" : undefined;
}
