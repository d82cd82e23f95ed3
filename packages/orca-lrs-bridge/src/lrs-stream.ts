// One LRS server's StreamLoadStats call, as gRPC C-core runs it: the node (with envoy.lrs.supports_send_all_clusters)
// on the first request; a report every load_reporting_interval (at least the floor), counted from the end of the
// previous send, once the server has answered; the server's latest cluster list or send_all_clusters; two all-zero
// reports in a row are not sent; a failed call is retried with backoff (reset when the call had seen a response).
// Figures are taken out of the store when a report is built, so a report lost with its call is never resent: a
// restart of the server can lose at most one interval, never count anything twice.
import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { createWritableIterable, type WritableIterable } from "@connectrpc/connect/protocol";
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import {
  type LoadReportingService,
  type LoadStatsRequest,
  LoadStatsRequestSchema,
  type LoadStatsResponse,
} from "@xdskit/protos/envoy/service/load_stats/v3/lrs_pb";
import type { Backoff, Clock } from "./clock.js";
import { durationToMs } from "./duration.js";
import type { ClusterSelection, LoadStore, LrsServer } from "./load-store.js";
import type { ScopedLogger } from "./logger.js";
import { clearLongTimer, type LongTimer, setLongTimeout } from "./long-timer.js";

export interface LrsStreamDeps {
  readonly server: LrsServer;
  readonly client: Client<typeof LoadReportingService>;
  /** Sent on the first request of every call. */
  readonly node: Node;
  readonly store: LoadStore;
  readonly clock: Clock;
  readonly backoff: Backoff;
  readonly logger: ScopedLogger;
  readonly minReportIntervalMs: number;
  /** How long `close()` waits for the server to end the call after the last report. */
  readonly closeGraceMs: number;
}

interface Call {
  readonly requests: WritableIterable<LoadStatsRequest>;
  readonly abort: AbortController;
  readonly ended: Promise<void>;
  seenResponse: boolean;
  selection: ClusterSelection;
  intervalMs: number;
  reportTimer: unknown;
  sending: boolean;
  lastReportWasZero: boolean;
}

const NOTHING: ClusterSelection = Object.freeze({ sendAllClusters: false, clusters: new Set<string>() });

export class LrsStream {
  readonly #deps: LrsStreamDeps;
  #call: Call | undefined;
  #retryTimer: unknown;
  #closed = false;

  constructor(deps: LrsStreamDeps) {
    this.#deps = deps;
  }

  /** Starts a call unless one is open or a retry is pending. */
  ensureRunning(): void {
    if (this.#closed || this.#call !== undefined || this.#retryTimer !== undefined) return;
    this.#startCall();
  }

  /**
   * Sends what was counted since the last report (once, if the call is up and the server has answered), ends the
   * call, and cancels every timer.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#retryTimer !== undefined) this.#deps.clock.clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    const call = this.#call;
    if (call === undefined) return;
    this.#clearReportTimer(call);
    if (call.seenResponse) await this.#sendReport(call, true);
    call.requests.close();
    let grace: LongTimer | undefined;
    await Promise.race([
      call.ended,
      new Promise<void>((resolve) => (grace = setLongTimeout(resolve, this.#deps.closeGraceMs))),
    ]);
    clearLongTimer(grace);
    call.abort.abort();
    this.#call = undefined;
  }

  #startCall(): void {
    const { client, node, logger } = this.#deps;
    const requests = createWritableIterable<LoadStatsRequest>();
    const abort = new AbortController();
    let markEnded: () => void = () => {};
    const call: Call = {
      requests,
      abort,
      ended: new Promise<void>((resolve) => (markEnded = resolve)),
      seenResponse: false,
      selection: NOTHING,
      intervalMs: 0,
      reportTimer: undefined,
      sending: false,
      lastReportWasZero: false,
    };
    this.#call = call;
    logger.debug("starting LRS call");
    const responses = client.streamLoadStats(requests, { signal: abort.signal });
    requests.write(create(LoadStatsRequestSchema, { node })).catch(() => {});
    void (async () => {
      let failure: unknown;
      try {
        for await (const response of responses) this.#onResponse(call, response);
      } catch (error) {
        failure = error;
      }
      markEnded();
      this.#onCallEnded(call, failure);
    })();
  }

  #onResponse(call: Call, response: LoadStatsResponse): void {
    if (call !== this.#call || this.#closed) return;
    call.seenResponse = true;
    const intervalMs = Math.max(durationToMs(response.loadReportingInterval), this.#deps.minReportIntervalMs);
    call.selection = response.sendAllClusters
      ? { sendAllClusters: true, clusters: NOTHING.clusters }
      : { sendAllClusters: false, clusters: new Set(response.clusters) };
    this.#deps.logger.debug(
      () =>
        `LRS response: ${response.sendAllClusters ? "all clusters" : `clusters [${response.clusters.join(", ")}]`}, every ${intervalMs} ms`,
    );
    const intervalChanged = intervalMs !== call.intervalMs;
    call.intervalMs = intervalMs;
    if (call.sending) return;
    if (intervalChanged) this.#clearReportTimer(call);
    if (call.reportTimer === undefined) this.#scheduleReport(call);
  }

  #scheduleReport(call: Call): void {
    call.reportTimer = this.#deps.clock.setTimeout(() => {
      call.reportTimer = undefined;
      void this.#sendReport(call, false);
    }, call.intervalMs);
  }

  #clearReportTimer(call: Call): void {
    if (call.reportTimer !== undefined) this.#deps.clock.clearTimeout(call.reportTimer);
    call.reportTimer = undefined;
  }

  async #sendReport(call: Call, final: boolean): Promise<void> {
    if (call !== this.#call) return;
    const { store, server } = this.#deps;
    const report = store.takeReport(server, call.selection);
    const skip = report.allZero && call.lastReportWasZero;
    call.lastReportWasZero = report.allZero;
    if (!skip) {
      call.sending = true;
      try {
        await call.requests.write(create(LoadStatsRequestSchema, { clusterStats: report.clusterStats }));
      } catch {
        // The call ended: its end handler retries. These figures are lost with it, never resent.
        return;
      } finally {
        call.sending = false;
      }
    }
    if (final || call !== this.#call || this.#closed) return;
    if (!store.hasLoad(server)) {
      this.#deps.logger.debug("no load left to report: ending the LRS call");
      this.#call = undefined;
      call.requests.close();
      call.abort.abort();
      return;
    }
    if (call.reportTimer === undefined) this.#scheduleReport(call);
  }

  #onCallEnded(call: Call, failure: unknown): void {
    this.#clearReportTimer(call);
    if (call !== this.#call) return;
    this.#call = undefined;
    if (this.#closed) return;
    const { logger, backoff, clock, store, server } = this.#deps;
    if (call.seenResponse) backoff.reset();
    if (!store.hasLoad(server)) return;
    const delayMs = backoff.next();
    logger.warn(
      () =>
        `LRS call ${failure === undefined ? "ended by the server" : `failed: ${failure instanceof Error ? failure.message : String(failure)}`}; retrying in ${delayMs} ms`,
    );
    this.#retryTimer = clock.setTimeout(() => {
      this.#retryTimer = undefined;
      this.ensureRunning();
    }, delayMs);
  }
}
