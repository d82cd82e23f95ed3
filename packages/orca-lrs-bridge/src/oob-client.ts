// The out-of-band ORCA client of one backend connection (A51): one StreamCoreMetrics call shared by every
// listener, asking for the smallest interval any of them wants (a change restarts the call). A failed call is
// retried with backoff, reset whenever a report arrives; UNIMPLEMENTED means the backend has no ORCA service: logged
// as an error and never retried on this client. `close()` cancels the call (and closes the connection the client
// opened itself, when given a `server` rather than a transport).
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import type { OrcaLoadReport } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { OpenRcaService, OrcaLoadReportRequestSchema } from "@xdskit/protos/xds/service/orca/v3/orca_pb";
import { type BackoffOptions, type Clock, createBackoff, systemClock } from "./clock.js";
import { msToDuration } from "./duration.js";
import type { ChannelCredentials } from "./load-store.js";
import { loggerFromEnvironment } from "./log-environment.js";
import { type Logger, noopLogger, scopeLogger } from "./logger.js";
import { dropOutOfRange } from "./orca-ranges.js";
import { createOwnedTransport } from "./transport.js";

export interface OrcaOobListener {
  /** How often this listener wants a report; the call asks for the smallest of all listeners'. */
  readonly intervalMs: number;
  onReport(report: OrcaLoadReport): void;
}

export interface OrcaOobClientOptions {
  /**
   * The backend connection (a Connect transport to one backend). Its sessions are the caller's: with connect-node's
   * default manager, a backend that answers with bytes that are not HTTP/2 can raise an uncaught 'error'.
   */
  readonly transport?: Transport;
  /**
   * Instead of `transport`: the backend (`host:port` or an http(s) URL, plaintext unless TLS credentials are given);
   * the client opens its own HTTP/2 connection (a peer's errors fail the call, never the process) and `close()`
   * closes it.
   */
  readonly server?: { readonly serverUri: string; readonly channelCredentials?: ChannelCredentials };
  readonly logger?: Logger;
  /** For retries. */
  readonly clock?: Clock;
  readonly backoff?: BackoffOptions;
}

export type OrcaOobState = "idle" | "streaming" | "backoff" | "unimplemented" | "closed";

export interface OrcaOobClient {
  /** Adds a listener; returns the function that removes it (the call stops with the last listener). */
  subscribe(listener: OrcaOobListener): () => void;
  /** What the client is doing (for diagnostics). */
  readonly state: OrcaOobState;
  /** The interval the current call asked for, if one runs. */
  readonly requestedIntervalMs: number | undefined;
  /** Cancels the call and drops every listener. */
  close(): void;
}

export function createOrcaOobClient(options: OrcaOobClientOptions): OrcaOobClient {
  if ((options.transport === undefined) === (options.server === undefined)) {
    throw new TypeError("createOrcaOobClient: give either transport or server");
  }
  const owned =
    options.server === undefined
      ? undefined
      : createOwnedTransport(options.server.serverUri, options.server.channelCredentials);
  const client = createClient(OpenRcaService, owned?.transport ?? (options.transport as Transport));
  const clock = options.clock ?? systemClock;
  const backoff = createBackoff(options.backoff);
  const logger = scopeLogger(options.logger ?? loggerFromEnvironment("orca-lrs-bridge") ?? noopLogger, "[orca-oob]");
  const listeners = new Set<OrcaOobListener>();
  let state: OrcaOobState = "idle";
  let call: { abort: AbortController; intervalMs: number } | undefined;
  let retryTimer: unknown;

  function smallestInterval(): number {
    let min = Number.POSITIVE_INFINITY;
    for (const listener of listeners) min = Math.min(min, listener.intervalMs);
    return min;
  }

  function cancelCall(): void {
    call?.abort.abort();
    call = undefined;
  }

  /** Brings the call in line with the listeners: none, or one asking for the smallest interval. */
  function update(): void {
    if (state === "closed" || state === "unimplemented" || state === "backoff") return;
    if (listeners.size === 0) {
      cancelCall();
      state = "idle";
      return;
    }
    const intervalMs = smallestInterval();
    if (call !== undefined && call.intervalMs === intervalMs) return;
    cancelCall();
    start(intervalMs);
  }

  function start(intervalMs: number): void {
    const abort = new AbortController();
    const current = { abort, intervalMs };
    call = current;
    state = "streaming";
    logger.debug(() => `StreamCoreMetrics every ${intervalMs} ms`);
    const request = create(OrcaLoadReportRequestSchema, { reportInterval: msToDuration(intervalMs) });
    void (async () => {
      let failure: ConnectError | undefined;
      try {
        for await (const report of client.streamCoreMetrics(request, { signal: abort.signal })) {
          if (call !== current) return;
          backoff.reset();
          dropOutOfRange(report);
          for (const listener of [...listeners]) listener.onReport(report);
        }
      } catch (error) {
        failure = ConnectError.from(error);
      }
      if (call !== current) return;
      call = undefined;
      if (failure?.code === Code.Unimplemented) {
        state = "unimplemented";
        logger.error(`the backend has no ORCA service (UNIMPLEMENTED): out-of-band reports are off for it`);
        return;
      }
      const delayMs = backoff.next();
      state = "backoff";
      logger.warn(`StreamCoreMetrics ${failure ? `failed: ${failure.message}` : "ended"}; retrying in ${delayMs} ms`);
      retryTimer = clock.setTimeout(() => {
        retryTimer = undefined;
        if (state !== "backoff") return;
        state = "idle";
        update();
      }, delayMs);
    })();
  }

  return {
    subscribe(listener) {
      if (state === "closed") throw new Error("the ORCA OOB client is closed");
      if (!(listener.intervalMs >= 0)) throw new RangeError("subscribe: intervalMs must be >= 0");
      listeners.add(listener);
      update();
      return () => {
        if (listeners.delete(listener)) update();
      };
    },
    get state() {
      return state;
    },
    get requestedIntervalMs() {
      return call?.intervalMs;
    },
    close() {
      if (state === "closed") return;
      state = "closed";
      if (retryTimer !== undefined) clock.clearTimeout(retryTimer);
      retryTimer = undefined;
      listeners.clear();
      cancelCall();
      owned?.close();
    },
  };
}
