// One xDS server: its transport and the life of the ADS call on it (state of the world or delta, per the
// bootstrap's `api_type`): start, coalesced requests, flow-controlled reads, one ACK or NACK per response,
// reconnects after a response, backoff after a failure, and what it tells the layer above (the authority manager)
// about reachability. It knows nothing of authorities or the cache: it asks its host what to subscribe to and hands
// it each decoded response. The protocol module (protocol.ts) is loaded before the first call; a failure to load it
// counts as a call that failed with no responses.
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type { Bootstrap, XdsServerConfig } from "../bootstrap/bootstrap-types.js";
import type { AdsCall, CallHost } from "../calls/ads-call.js";
import type { SotwMemory } from "../calls/sotw-call.js";
import type { ScopedLogger } from "../observability/logger.js";
import { XdsMetricName, type XdsMetricsRecorder } from "../observability/metrics.js";
import type { Protocol, ProtocolLoader } from "../protocol/protocol-loader.js";
import { type BackoffOptions, type Clock, createBackoff } from "../shared/clock.js";
import type { XdsFeatures } from "../shared/features.js";
import { errorMessage, StatusCode, statusCodeName, XdsError } from "../shared/xds-error.js";
import type { CallbackQueue } from "../state/callback-queue.js";
import type { ResourceState } from "../state/resource-state.js";
import type { XdsTransport } from "../transport/transport-types.js";
import type { DecodeMemo } from "../wire/decode-memo.js";
import type { DecodedResponse } from "../wire/decoded-response.js";
import type { ResourceType } from "../wire/resource-type.js";

/** What a channel needs from the layer above it. */
export interface ChannelHost {
  /** The subscriptions of `typeUrl` this channel must request. */
  subscriptions(channel: XdsChannel, typeUrl: string): readonly ResourceState[];
  /** The types this channel has subscriptions of. */
  subscribedTypes(channel: XdsChannel): readonly string[];
  /** Delta: name -> version of what the wildcards of `typeUrl` on this channel hold. */
  coveredVersions(channel: XdsChannel, typeUrl: string): Iterable<[string, string]>;
  typeOf(typeUrl: string): ResourceType<unknown> | undefined;
  /** A response arrived; runs inside a callback group (the next read waits for the callbacks it caused). */
  onResponse(channel: XdsChannel, response: DecodedResponse): void;
  /** An ADS call failed before any response; runs inside a callback group. */
  onConnectivityFailure(channel: XdsChannel, error: XdsError): void;
  /** A does-not-exist timer of one of this channel's calls fired. */
  expired(channel: XdsChannel, state: ResourceState, transient: boolean): void;
}

export interface XdsChannelOptions {
  readonly server: XdsServerConfig;
  readonly transport: XdsTransport;
  readonly host: ChannelHost;
  readonly bootstrap: Bootstrap;
  readonly features: XdsFeatures;
  /** The Node message of the first request of each call, built (with the protocol module) when first needed. */
  readonly node: () => Node;
  /** Loads the protocol module; the first call starts once it is loaded. */
  readonly loadProtocol: ProtocolLoader;
  /** Set while a registered type's decoder is still loading: decoding waits for it. */
  readonly decodersLoading: () => Promise<void> | undefined;
  readonly clock: Clock;
  readonly random: () => number;
  readonly backoff: BackoffOptions;
  /** SotW: the byte-identical skip (DecodeMemo) is on. */
  readonly decodeMemo: boolean;
  readonly queue: CallbackQueue;
  readonly metrics: XdsMetricsRecorder;
  readonly target: string;
  readonly connectTimeoutMs: number;
  readonly log: ScopedLogger;
}

export interface XdsChannel {
  readonly server: XdsServerConfig;
  /**
   * A78 `connected`: a call has received a response and no call failed without one since (a call that ends after a
   * response is not an error, A57, and leaves it set); false while nothing is watched on this server.
   */
  readonly connected: boolean;
  /** Set while the server is unreachable: its last ADS call failed before any response. */
  readonly connectivityError: XdsError | undefined;
  /** Requests for `typeUrl` need sending: coalesced, so one tick of watch/unwatch calls makes one request per type. */
  subscriptionsChanged(typeUrl: string): void;
  /** Ends the call, its timers and the transport; nothing of the channel runs afterwards. */
  close(): void;
}

export function createXdsChannel(options: XdsChannelOptions): XdsChannel {
  const { server, transport, host, clock, queue, log } = options;
  const backoff = createBackoff(options.random, options.backoff);
  const versions = new Map<string, string>();
  const memos = new Map<string, DecodeMemo>();
  /** Set once the protocol module is loaded (before the first call). */
  let protocol: Protocol | undefined;
  let loadingProtocol = false;
  const sotwMemory: SotwMemory = {
    versions,
    memo(typeUrl) {
      if (!options.decodeMemo || protocol === undefined) return undefined;
      let memo = memos.get(typeUrl);
      if (!memo) {
        memo = new protocol.DecodeMemo();
        memos.set(typeUrl, memo);
      }
      return memo;
    },
  };
  let call: AdsCall | undefined;
  let receivedResponse = false;
  let retryTimer: unknown;
  let pendingTypes = new Set<string>();
  let flushScheduled = false;
  let closed = false;
  let connected = false;
  let healthy = true;
  let connectivityError: XdsError | undefined;

  const channel: XdsChannel = {
    server,
    get connected() {
      return connected;
    },
    get connectivityError() {
      return connectivityError;
    },
    subscriptionsChanged(typeUrl) {
      if (closed) return;
      pendingTypes.add(typeUrl);
      if (flushScheduled) return;
      flushScheduled = true;
      queueMicrotask(flush);
    },
    close() {
      closed = true;
      cancelRetry();
      endCall();
      transport.close();
    },
  };

  const callHost: CallHost = {
    server,
    get node() {
      return options.node();
    },
    clock,
    log,
    decode: {
      features: options.features,
      context: { server, bootstrap: options.bootstrap, features: options.features },
    },
    connectTimeoutMs: options.connectTimeoutMs,
    subscriptions: (typeUrl) => host.subscriptions(channel, typeUrl),
    coveredVersions: (typeUrl) => host.coveredVersions(channel, typeUrl),
    typeOf: (typeUrl) => host.typeOf(typeUrl),
    decodersLoading: options.decodersLoading,
    expired: (state, transient) => host.expired(channel, state, transient),
  };

  function flush(): void {
    flushScheduled = false;
    const types = pendingTypes;
    pendingTypes = new Set();
    if (closed) return;
    if (host.subscribedTypes(channel).length === 0) {
      // Nothing watched on this server: close the stream; it reopens with the next watch.
      cancelRetry();
      endCall();
      connected = false;
      return;
    }
    if (call) {
      for (const typeUrl of types) call.update(typeUrl);
    } else if (retryTimer === undefined) {
      startCall();
    }
  }

  /** Starts a call once the protocol module is loaded; a failed load is a call failed with no responses. */
  function startCall(): void {
    if (protocol !== undefined) {
      startLoadedCall(protocol);
      return;
    }
    if (loadingProtocol) return;
    loadingProtocol = true;
    options.loadProtocol().then(
      (loaded) => {
        loadingProtocol = false;
        protocol = loaded;
        if (!closed && !call && retryTimer === undefined && host.subscribedTypes(channel).length > 0) {
          startLoadedCall(loaded);
        }
      },
      (error: unknown) => {
        loadingProtocol = false;
        if (closed || call || retryTimer !== undefined) return;
        log.warn(`the xDS protocol module could not be loaded (${errorMessage(error)})`);
        failed(error);
      },
    );
  }

  function startLoadedCall({ createDeltaCall, createSotwCall }: Protocol): void {
    const next =
      server.apiType === "DELTA_GRPC"
        ? createDeltaCall(callHost, transport.deltaAggregatedResources())
        : createSotwCall(callHost, transport.streamAggregatedResources(), sotwMemory);
    call = next;
    receivedResponse = false;
    log.debug(() => `ADS call #${next.id} started (${server.apiType})`);
    for (const typeUrl of host.subscribedTypes(channel)) next.update(typeUrl);
    void readLoop(next);
  }

  function endCall(): void {
    const current = call;
    if (!current) return;
    call = undefined;
    current.cancel();
  }

  function cancelRetry(): void {
    if (retryTimer !== undefined) {
      clock.clearTimeout(retryTimer);
      retryTimer = undefined;
    }
  }

  async function readLoop(current: AdsCall): Promise<void> {
    let failure: unknown;
    try {
      for (;;) {
        const response = await current.next();
        if (call !== current) return;
        if (response === undefined) break;
        if (!receivedResponse) {
          receivedResponse = true;
          backoff.reset();
          healthy = true;
          connected = true;
          connectivityError = undefined;
        }
        // Applied by the layers above, then ACKed or NACKed: one request per response.
        const group = queue.grouped(() => host.onResponse(channel, response));
        current.acknowledge(response);
        // Flow control: the next read waits for every watcher callback this response caused.
        await group.settled();
        if (call !== current) return;
      }
    } catch (error) {
      failure = error;
    }
    if (call === current) onCallEnded(current, failure);
  }

  function onCallEnded(ended: AdsCall, failure: unknown): void {
    endCall();
    const status = describeFailure(failure);
    if (receivedResponse) {
      // A57: a stream that ends after a response is not an error; reconnect at once (backoff was reset).
      log.info(`ADS call #${ended.id} ended (${status}); reconnecting`);
      if (host.subscribedTypes(channel).length > 0) startCall();
      return;
    }
    if (transport.nextAddress?.()) {
      // Replicas named by one server_uri: the next address, at once; the watchers hear of a failure only once every
      // address has failed (docs/decisions.md#replicas-in-a-bootstrap).
      log.info(`ADS call #${ended.id} failed with no responses received (${status}); trying the server's next address`);
      if (host.subscribedTypes(channel).length > 0) startCall();
      return;
    }
    log.warn(`ADS call #${ended.id} failed with no responses received (${status})`);
    failed(failure);
  }

  /** No call got a response: the server counts as unreachable until one does; retried with backoff. */
  function failed(failure: unknown): void {
    const status = describeFailure(failure);
    connected = false;
    if (healthy) {
      healthy = false;
      options.metrics.addCounter(XdsMetricName.serverFailure, 1, {
        "grpc.target": options.target,
        "grpc.xds.server": server.serverUri,
      });
    }
    const error = new XdsError(
      StatusCode.UNAVAILABLE,
      "connection",
      `xDS channel for server ${server.serverUri}: xDS call failed with no responses received; status: ${status}`,
      { nodeId: options.bootstrap.node.id, cause: failure },
    );
    connectivityError = error;
    // The layer above decides, per authority, between falling back to the next server and telling the watchers (A71).
    queue.grouped(() => host.onConnectivityFailure(channel, error));
    retryTimer = clock.setTimeout(() => {
      retryTimer = undefined;
      if (!closed && !call && host.subscribedTypes(channel).length > 0) startCall();
    }, backoff.next());
  }

  return channel;
}

function describeFailure(failure: unknown): string {
  if (failure === undefined) return "OK";
  const code = (failure as { code?: unknown }).code;
  const raw = (failure as { rawMessage?: unknown }).rawMessage;
  const message = typeof raw === "string" ? raw : errorMessage(failure);
  return typeof code === "number" ? `${statusCodeName(code)}: ${message}` : message;
}
