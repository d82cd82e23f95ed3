// One xDS server: its transport and the life of the ADS call on it (state of the world or delta, per the
// bootstrap's `api_type`): start, coalesced requests, flow-controlled reads, reconnects after a response, backoff
// after a failure, and what it tells the client about reachability. The protocols live in sotw-call.ts and
// delta-call.ts; what responses do to the cache lives in cache-updates.ts.
import type { AdsCall, CallHost } from "./ads-call.js";
import type { AuthorityState } from "./authority.js";
import type { XdsServerConfig } from "./bootstrap-types.js";
import { CacheUpdater, type ChannelContext, DecodeMemo } from "./cache-updates.js";
import { type Backoff, createBackoff } from "./clock.js";
import { createDeltaCall } from "./delta-call.js";
import type { ScopedLogger } from "./logger.js";
import { XdsMetricName } from "./metrics.js";
import { createSotwCall } from "./sotw-call.js";
import type { XdsTransport } from "./transport.js";
import { StatusCode, statusCodeName, XdsError } from "./xds-error.js";

export type { ChannelContext } from "./cache-updates.js";

/** What a channel tells the client about the server's reachability. */
export interface ChannelEvents {
  /** An ADS call failed before any response; runs inside a callback group. */
  onConnectivityFailure(channel: XdsChannel, error: XdsError): void;
  /** A response arrived (the server is reachable and serving). */
  onResponse(channel: XdsChannel): void;
}

export class XdsChannel implements CallHost {
  readonly authorities = new Set<AuthorityState>();
  readonly versions = new Map<string, string>();
  readonly updater: CacheUpdater;
  private readonly memos = new Map<string, DecodeMemo>();
  private call: AdsCall | undefined;
  private receivedResponse = false;
  private readonly backoff: Backoff;
  private retryTimer: unknown;
  private pendingTypes = new Set<string>();
  private flushScheduled = false;
  private closed = false;
  /** The current connectivity error, while the server is unreachable. */
  connectivityError: XdsError | undefined;
  /** A78 `connected`: an ADS call on this server has received a response and not failed since. */
  connected = false;
  private healthy = true;

  constructor(
    readonly server: XdsServerConfig,
    private readonly transport: XdsTransport,
    readonly context: ChannelContext,
    private readonly events: ChannelEvents,
    readonly log: ScopedLogger,
  ) {
    this.backoff = createBackoff(context.random);
    this.updater = new CacheUpdater(server, context, log);
  }

  memo(typeUrl: string): DecodeMemo {
    let memo = this.memos.get(typeUrl);
    if (!memo) {
      memo = new DecodeMemo();
      this.memos.set(typeUrl, memo);
    }
    return memo;
  }

  /** Requests for `typeUrl` need sending: coalesced, so one tick of watch/unwatch calls makes one request per type. */
  subscriptionsChanged(typeUrl: string): void {
    if (this.closed) return;
    this.pendingTypes.add(typeUrl);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => this.flush());
  }

  close(): void {
    this.closed = true;
    this.cancelRetry();
    this.endCall();
    this.transport.close();
  }

  private flush(): void {
    this.flushScheduled = false;
    const types = this.pendingTypes;
    this.pendingTypes = new Set();
    if (this.closed) return;
    if (this.subscribedTypes().length === 0) {
      // Nothing watched on this server: close the stream; it reopens with the next watch.
      this.cancelRetry();
      this.endCall();
      return;
    }
    if (this.call) {
      for (const typeUrl of types) this.call.update(typeUrl);
    } else if (this.retryTimer === undefined) {
      this.startCall();
    }
  }

  private subscribedTypes(): string[] {
    const types = new Set<string>();
    for (const authority of this.authorities) {
      for (const [typeUrl, table] of authority.resources) if (table.size > 0) types.add(typeUrl);
    }
    return [...types];
  }

  private startCall(): void {
    const call =
      this.server.apiType === "DELTA_GRPC"
        ? createDeltaCall(this, this.transport.deltaAggregatedResources())
        : createSotwCall(this, this.transport.streamAggregatedResources());
    this.call = call;
    this.receivedResponse = false;
    this.log.debug(() => `ADS call #${call.id} started (${this.server.apiType})`);
    for (const typeUrl of this.subscribedTypes()) call.update(typeUrl);
    void this.readLoop(call);
  }

  private endCall(): void {
    const call = this.call;
    if (!call) return;
    this.call = undefined;
    call.cancel();
    this.cancelTimers();
  }

  private cancelRetry(): void {
    if (this.retryTimer !== undefined) {
      this.context.clock.clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
    }
  }

  private cancelTimers(): void {
    for (const authority of this.authorities) {
      for (const table of authority.resources.values()) {
        for (const byParameters of table.values()) for (const state of byParameters.values()) state.cancelTimer();
      }
    }
  }

  private async readLoop(call: AdsCall): Promise<void> {
    let failure: unknown;
    try {
      for (;;) {
        const apply = await call.next();
        if (this.call !== call) return;
        if (apply === undefined) break;
        this.onResponse();
        const group = this.context.queue.grouped(apply);
        // Flow control: the next read waits for every watcher callback this response caused.
        await group.settled();
        if (this.call !== call) return;
      }
    } catch (error) {
      failure = error;
    }
    if (this.call === call) this.onCallEnded(call, failure);
  }

  private onResponse(): void {
    if (!this.receivedResponse) {
      this.receivedResponse = true;
      this.backoff.reset();
      this.healthy = true;
      this.connected = true;
      this.connectivityError = undefined;
    }
    this.events.onResponse(this);
  }

  private onCallEnded(call: AdsCall, failure: unknown): void {
    this.call = undefined;
    this.cancelTimers();
    this.connected = false;
    const status = describeFailure(failure);
    if (this.receivedResponse) {
      // A57: a stream that ends after a response is not an error; reconnect at once (backoff was reset).
      this.log.info(`ADS call #${call.id} ended (${status}); reconnecting`);
      if (this.subscribedTypes().length > 0) this.startCall();
      return;
    }
    this.log.warn(`ADS call #${call.id} failed with no responses received (${status})`);
    if (this.healthy) {
      this.healthy = false;
      this.context.metrics.addCounter(XdsMetricName.serverFailure, 1, {
        "grpc.target": this.context.target,
        "grpc.xds.server": this.server.serverUri,
      });
    }
    const error = new XdsError(
      StatusCode.UNAVAILABLE,
      "connection",
      `xDS channel for server ${this.server.serverUri}: xDS call failed with no responses received; status: ${status}`,
      { nodeId: this.context.bootstrap.node.id, cause: failure },
    );
    this.connectivityError = error;
    // The client decides, per authority, between falling back to the next server and telling the watchers (A71).
    this.context.queue.grouped(() => this.events.onConnectivityFailure(this, error));
    this.retryTimer = this.context.clock.setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.closed && !this.call && this.subscribedTypes().length > 0) this.startCall();
    }, this.backoff.next());
  }
}

function describeFailure(failure: unknown): string {
  if (failure === undefined) return "OK";
  const code = (failure as { code?: unknown }).code;
  const message = (failure as { rawMessage?: unknown }).rawMessage ?? (failure as Error).message ?? String(failure);
  return typeof code === "number" ? `${statusCodeName(code)}: ${String(message)}` : String(message);
}
