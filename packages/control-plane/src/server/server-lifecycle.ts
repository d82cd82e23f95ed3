// The HTTP/2 listener of a server through start, stop, restart, close and TLS reloads, one transition at a time.

import type * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { ScopedLogger } from "../logger.js";
import { clearLongTimer, type LongTimer, setLongTimeout } from "../long-timer.js";
import type { TlsCredentials } from "../security/tls-credentials.js";
import { createHttp2Listener, onListening } from "../security/tls-server.js";

export interface ServerLifecycleOptions {
  readonly host: string;
  /** 0: an ephemeral port, kept across restarts once bound. */
  readonly port: number;
  readonly tls: TlsCredentials | undefined;
  readonly logger: ScopedLogger;
  /** How long `stop()` waits for sessions to close before destroying them. Default 250. */
  readonly shutdownGraceMs: number | undefined;
  readonly serve: (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;
  /** The server stopped listening: its streams must end (before the sessions close). */
  readonly stopping: () => void;
  /** `close()` stopped the server for good. */
  readonly closed: () => void;
}

export interface ServerLifecycle {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  readonly address: string;
  readonly listening: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
  reloadTls(): Promise<boolean>;
  /** Destroys every open HTTP/2 session (the abort-connections hook); returns how many. */
  destroySessions(): number;
}

/** Throws a RangeError for a port outside 0-65535 (`given`: the option as the caller wrote it). */
export function checkPort(port: number, given: unknown): void {
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`port must be an integer in 0-65535, got ${String(given)}`);
  }
}

export function createServerLifecycle(options: ServerLifecycleOptions): ServerLifecycle {
  const { host, tls, logger } = options;
  const sessions = new Set<http2.ServerHttp2Session>();
  let port = options.port;
  let server: http2.Http2Server | http2.Http2SecureServer | undefined;
  let closed = false;
  let warnedCleartext = false;
  let transition: Promise<void> = Promise.resolve();

  const serialize = (step: () => Promise<void>): Promise<void> => {
    const next = transition.then(step);
    transition = next.catch(() => {});
    return next;
  };

  const start = async (): Promise<void> => {
    if (closed) throw new Error("the management server is closed");
    if (server) return;
    const listener = createHttp2Listener(tls, options.serve, logger);
    listener.on("session", (session) => {
      sessions.add(session);
      session.on("error", (error) => logger.debug("HTTP/2 session error", error));
      session.once("close", () => sessions.delete(session));
    });
    listener.on("error", (error) => logger.error("HTTP/2 server error", error));
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error): void => reject(error);
      listener.once("error", onError);
      listener.listen(port, host, () => {
        listener.off("error", onError);
        resolve();
      });
    });
    port = (listener.address() as AddressInfo).port;
    server = listener;
    warnedCleartext = onListening(listener, tls, lifecycle, logger, warnedCleartext);
  };

  const stop = async (): Promise<void> => {
    const listener = server;
    if (!listener) return;
    server = undefined;
    tls?.unwatch();
    options.stopping();
    const serverClosed = new Promise<void>((resolve) => listener.close(() => resolve()));
    const open = [...sessions];
    const sessionsClosed = Promise.all(
      open.map((session) =>
        session.closed || session.destroyed
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
              session.once("close", () => resolve());
              session.close();
            }),
      ),
    );
    let timer: LongTimer | undefined;
    const grace = new Promise<void>((resolve) => {
      // From the options: any length (docs/decisions.md#long-timers).
      timer = setLongTimeout(resolve, options.shutdownGraceMs ?? 250);
    });
    await Promise.race([sessionsClosed, grace]);
    clearLongTimer(timer);
    for (const session of open) if (!session.destroyed) session.destroy();
    await serverClosed;
    logger.info(`stopped listening on ${lifecycle.address}`);
  };

  const lifecycle: ServerLifecycle = {
    host,
    get port() {
      return port;
    },
    get url() {
      return `${tls ? "https" : "http"}://${lifecycle.address}`;
    },
    get address() {
      return `${host.includes(":") ? `[${host}]` : host}:${port}`;
    },
    get listening() {
      return server !== undefined;
    },
    start: () => serialize(start),
    stop: () => serialize(stop),
    restart: () =>
      serialize(async () => {
        await stop();
        await start();
      }),
    close: () =>
      serialize(async () => {
        closed = true;
        await stop();
        options.closed();
      }),
    reloadTls: () => serialize(async () => {}).then(() => tls?.reload() ?? false),
    destroySessions() {
      const open = [...sessions];
      for (const session of open) session.destroy();
      return open.length;
    },
  };
  return lifecycle;
}
