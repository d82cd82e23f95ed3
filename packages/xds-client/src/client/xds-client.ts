// createXdsClient: the watch API. It wires the layers (docs/architecture.md): the cache owns resource states, the
// authority manager owns which server serves what, channels run ADS calls; watchers hear through the callback queue.
// Creating a client and watching load nothing more: the protocol module, the decoders of the built-in types and the
// transport load when first needed (docs/architecture.md#what-loads-when).
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type { ClientConfig } from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import { createAuthorityManager } from "../authority/authority-manager.js";
import { loadBootstrap } from "../bootstrap/bootstrap.js";
import type { Bootstrap, BootstrapConfig } from "../bootstrap/bootstrap-types.js";
import { createResourceCache } from "../cache/resource-cache.js";
import { WILDCARD, type WildcardWatcher, wildcardWatcherEntry } from "../cache/wildcard-state.js";
import { createXdsChannel } from "../channel/xds-channel.js";
import { loggerFromEnvironment } from "../observability/log-environment.js";
import { type Logger, noopLogger, scopeLogger } from "../observability/logger.js";
import { noopMetrics, type XdsMetricsRecorder } from "../observability/metrics.js";
import { csdsNow, loadProtocol, type ProtocolLoader, protocolNow } from "../protocol/protocol-loader.js";
import { type BackoffOptions, type Clock, systemClock } from "../shared/clock.js";
import { resolveFeatures, type XdsFeatures } from "../shared/features.js";
import { OLD_STYLE_AUTHORITY, parseResourceName } from "../shared/resource-name.js";
import { StatusCode, XdsError } from "../shared/xds-error.js";
import { createCallbackQueue } from "../state/callback-queue.js";
import type { ResourceWatcher, WatcherEntry } from "../state/resource-state.js";
import { createConnectTransport, DEFAULT_MAX_RECEIVE_MESSAGE_BYTES } from "../transport/transport.js";
import type { XdsTransportFactory } from "../transport/transport-types.js";
import type { ResourceType } from "../wire/resource-type.js";
import { decoderLoading } from "./builtin-types.js";
import { createProcessHold } from "./process-hold.js";

export interface WatchOptions {
  /**
   * A67/TP2: the dynamic parameters to subscribe with, replacing the bootstrap's for this name. Each distinct map
   * is its own subscription and cache entry. Ignored when dynamic parameters are switched off.
   */
  readonly dynamicParameters?: Readonly<Record<string, string>>;
}

export interface XdsClient {
  /** Watches one resource; returns the function that cancels the watch (idempotent). Never throws for per-watch problems. */
  watch<T>(type: ResourceType<T>, name: string, watcher: ResourceWatcher<T>, options?: WatchOptions): () => void;
  /**
   * Watches every resource of a type the servers of old-style names have: a wildcard subscription (`*`), for the
   * types whose state-of-the-world responses list every resource (LDS, CDS; `allResourcesRequiredInSotW`). One
   * subscription per type and parameter map, whatever the number of watches; a name also watched by name is one
   * cache entry for both. Returns the function that cancels the watch (idempotent). Never throws: a watch that
   * cannot be made is told so by `onAmbientError` without a name (docs/decisions.md#wildcard-watches).
   */
  watchAll<T>(type: ResourceType<T>, watcher: WildcardWatcher<T>, options?: WatchOptions): () => void;
  /** The cache as CSDS reports it. */
  dumpResources(): ClientConfig;
  readonly bootstrap: Bootstrap;
  readonly features: XdsFeatures;
  /** Ends every stream and timer; no callback runs afterwards. */
  close(): Promise<void>;
}

/** gRPC's minimum connect timeout: how long a server has to complete the HTTP/2 handshake. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 20_000;

export interface XdsClientOptions {
  /**
   * The bootstrap, gRPC's JSON format, as an object or as JSON text; default: the file named by `GRPC_XDS_BOOTSTRAP`,
   * then the JSON in `GRPC_XDS_BOOTSTRAP_CONFIG`. Checked when the client is created (`BootstrapError`).
   */
  readonly bootstrap?: BootstrapConfig | string;
  /** Where environment variables are read (bootstrap sources, experimental switches). Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Experimental switches; an explicit value wins over the environment. */
  readonly features?: Partial<XdsFeatures>;
  readonly logger?: Logger;
  readonly metrics?: XdsMetricsRecorder;
  /** The A78 `grpc.target` label and the CSDS `client_scope` (A71): the data-plane target, or `#server`. Default `#server`. */
  readonly target?: string;
  /** Largest response accepted, in bytes. Default 1 GiB. */
  readonly maxReceiveMessageBytes?: number;
  /**
   * How long a new ADS stream may wait for its connection (for HTTP/2, the server's answer to the connection
   * preface) before the attempt fails as a connectivity error. Default 20 s, gRPC's minimum connect timeout. The
   * does-not-exist timer starts only on an established stream (docs/decisions.md#connect-deadline).
   */
  readonly connectTimeoutMs?: number;
  /** Opens streams to a server; default gRPC over HTTP/2 with connect-node. */
  readonly transportFactory?: XdsTransportFactory;
  /**
   * While the client has watchers, keep the Node process alive, through outages and reconnect backoff included, as a
   * gRPC channel with an active call does; `close()` (or cancelling every watch) lets it exit. Default true. False:
   * the client never holds the process open by itself (an open ADS stream's connection still does, as Node's HTTP/2
   * does for any open stream), so a process that only watches may exit while the server is unreachable.
   */
  readonly keepProcessAlive?: boolean;
}

/** Time and randomness, for tests (see `./internal`). */
export interface XdsClientInternals {
  readonly clock?: Clock;
  readonly random?: () => number;
  /** The reconnect backoff (default gRPC's: 1 s, ×1.6, ±20 %, at most 120 s); tests shorten it. */
  readonly backoff?: BackoffOptions;
  /** SotW: reuse the decode of a resource whose bytes were in the previous response (default true; off in tests). */
  readonly decodeMemo?: boolean;
  /**
   * A re-pushed resource an entry holds ACKed and clean only moves its version (`reapplyIdentical`; default true;
   * off in the test that proves it against applying).
   */
  readonly reapplyIdentical?: boolean;
  /** Loads the protocol module (protocol.ts); tests inject one that fails. */
  readonly loadProtocol?: ProtocolLoader;
}

export function createXdsClient(options: XdsClientOptions = {}): XdsClient {
  return createXdsClientWithInternals(options, {});
}

export function createXdsClientWithInternals(options: XdsClientOptions, internals: XdsClientInternals): XdsClient {
  const env = options.env ?? process.env;
  const features = resolveFeatures(options.features, env);
  const bootstrap = loadBootstrap(options.bootstrap, env, {
    federation: features.federation,
    dynamicParameters: features.dynamicParameters,
  });
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  if (!(connectTimeoutMs > 0)) {
    throw new XdsError(StatusCode.INVALID_ARGUMENT, "invalid_options", "connectTimeoutMs must be a positive number");
  }
  const logger = scopeLogger(options.logger ?? loggerFromEnvironment("xds-client", env) ?? noopLogger, "[xds-client]");
  const metrics = options.metrics ?? noopMetrics;
  const target = options.target ?? "#server";
  const clock = internals.clock ?? systemClock;
  const queue = createCallbackQueue((error) =>
    logger.error(`a watcher threw: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`),
  );
  let node: Node | undefined;
  const nodeMessage = (): Node => {
    node ??= protocolNow().buildNode(bootstrap.node);
    return node;
  };
  const types = new Map<string, ResourceType<unknown>>();
  /** Settles once every registered type's decoder loaded (undefined when they all are): decoding waits for it. */
  const decodersLoading = (): Promise<void> | undefined => {
    let loading: Promise<void>[] | undefined;
    for (const type of types.values()) {
      const pending = decoderLoading(type);
      if (pending === undefined) continue;
      if (loading === undefined) loading = [pending];
      else loading.push(pending);
    }
    return loading === undefined ? undefined : Promise.all(loading).then(() => {});
  };
  const transportFactory = options.transportFactory ?? createConnectTransport;
  const maxReceiveMessageBytes = options.maxReceiveMessageBytes ?? DEFAULT_MAX_RECEIVE_MESSAGE_BYTES;
  const cache = createResourceCache({
    queue,
    clock,
    features,
    nodeId: bootstrap.node.id,
    metrics,
    target,
    log: logger,
    reapplyIdentical: internals.reapplyIdentical ?? true,
  });
  const manager = createAuthorityManager({
    bootstrap,
    features,
    cache,
    target,
    log: logger,
    typeOf: (typeUrl) => types.get(typeUrl),
    createChannel: (server, host) =>
      createXdsChannel({
        server,
        transport: transportFactory(server, { maxReceiveMessageBytes }),
        host,
        bootstrap,
        features,
        node: nodeMessage,
        loadProtocol: internals.loadProtocol ?? loadProtocol,
        decodersLoading,
        clock,
        random: internals.random ?? Math.random,
        backoff: internals.backoff ?? {},
        decodeMemo: internals.decodeMemo ?? true,
        queue,
        metrics,
        target,
        connectTimeoutMs,
        log: logger.child(`[xds server ${server.serverUri}]`),
      }),
  });
  let closed = false;
  const closers: (() => void)[] = [];
  const hold = createProcessHold(options.keepProcessAlive ?? true);

  /** Registers a resource type on its first watch; warns when another object already claims its type URL. */
  function register(type: ResourceType<unknown>): void {
    const known = types.get(type.typeUrl);
    if (known === undefined) {
      types.set(type.typeUrl, type);
      // A built-in type's decoder loads once this tick's work is done (while the connection is being made), not
      // inside watch(); a failure shows when a response needs it (as a call failure).
      setImmediate(() => {
        if (!closed) decoderLoading(type)?.catch(() => {});
      });
    } else if (known !== type)
      logger.warn(`two resource types share ${type.typeUrl}; the first one registered decodes`);
  }

  function failWatch(watcher: ResourceWatcher<unknown>, error: XdsError): () => void {
    const entry: WatcherEntry = { watcher, active: true };
    queue.push(() => (entry.active ? watcher.onResourceChanged({ ok: false, error }) : undefined));
    return () => {
      entry.active = false;
    };
  }

  if (metrics.registerGauges) {
    closers.push(
      metrics.registerGauges((record) => {
        manager.recordGauges(record);
        cache.recordGauges(record);
      }),
    );
  }

  return {
    bootstrap,
    features,
    watch<T>(type: ResourceType<T>, name: string, watcher: ResourceWatcher<T>, watchOptions?: WatchOptions) {
      const untyped = watcher as ResourceWatcher<unknown>;
      const nodeId = bootstrap.node.id;
      const resource = { typeUrl: type.typeUrl, name };
      if (closed) {
        return failWatch(
          untyped,
          new XdsError(StatusCode.CANCELLED, "internal", "the xDS client is closed", { nodeId, resource }),
        );
      }
      register(type as ResourceType<unknown>);
      const typeName = type.typeUrl.slice(type.typeUrl.lastIndexOf("/") + 1);
      if (name.startsWith("xdstp:") && !features.federation) {
        return failWatch(
          untyped,
          new XdsError(
            StatusCode.INVALID_ARGUMENT,
            "invalid_name",
            `xdstp name "${name}" used with federation disabled`,
            {
              nodeId,
              resource,
            },
          ),
        );
      }
      const parsed = parseResourceName(name, typeName);
      if (!parsed.ok) {
        return failWatch(
          untyped,
          new XdsError(StatusCode.INVALID_ARGUMENT, "invalid_name", parsed.error, { nodeId, resource }),
        );
      }
      const authority = manager.authority(parsed.authority);
      if (!authority) {
        return failWatch(
          untyped,
          new XdsError(
            StatusCode.FAILED_PRECONDITION,
            "unknown_authority",
            `authority "${parsed.authority}" of "${name}" is not in the bootstrap`,
            { nodeId, resource },
          ),
        );
      }
      // A67 off: no parameters at all, neither the bootstrap's nor the watch's (docs/decisions.md#switch-defaults).
      const parameters = features.dynamicParameters
        ? (watchOptions?.dynamicParameters ?? authority.defaultParameters)
        : {};
      const { state, created } = cache.subscribe(authority.name, type.typeUrl, parsed.name, parameters);
      if (created) manager.subscriptionsChanged(authority.name, type.typeUrl);
      const entry: WatcherEntry = { watcher: untyped, active: true };
      cache.addWatcher(state, entry, manager.outage(authority.name));
      hold.acquire();
      let cancelled = false;
      return () => {
        if (cancelled) return;
        cancelled = true;
        hold.release();
        if (cache.removeWatcher(state, entry)) manager.subscriptionsChanged(authority.name, type.typeUrl);
      };
    },
    watchAll<T>(type: ResourceType<T>, watcher: WildcardWatcher<T>, watchOptions?: WatchOptions) {
      const untyped = watcher as WildcardWatcher<unknown>;
      const resource = { typeUrl: type.typeUrl, name: WILDCARD };
      const refuse = (code: StatusCode, kind: "internal" | "invalid_options", detail: string) => {
        const entry = { active: true };
        const error = new XdsError(code, kind, detail, { nodeId: bootstrap.node.id, resource });
        queue.push(() => (entry.active ? untyped.onAmbientError(error) : undefined));
        return () => {
          entry.active = false;
        };
      };
      if (closed) return refuse(StatusCode.CANCELLED, "internal", "the xDS client is closed");
      if (!type.allResourcesRequiredInSotW) {
        return refuse(
          StatusCode.INVALID_ARGUMENT,
          "invalid_options",
          `a wildcard subscription needs a type whose state-of-the-world responses list every resource (LDS, CDS); ${type.typeUrl} is not one`,
        );
      }
      register(type as ResourceType<unknown>);
      const authority = manager.authority(OLD_STYLE_AUTHORITY)!;
      const parameters = features.dynamicParameters
        ? (watchOptions?.dynamicParameters ?? authority.defaultParameters)
        : {};
      const { state, created } = cache.subscribeWildcard(authority.name, type.typeUrl, parameters);
      if (created) manager.subscriptionsChanged(authority.name, type.typeUrl);
      const entry = wildcardWatcherEntry(untyped);
      cache.addWildcardWatcher(state, entry, manager.outage(authority.name));
      hold.acquire();
      let cancelled = false;
      return () => {
        if (cancelled) return;
        cancelled = true;
        hold.release();
        if (cache.removeWildcardWatcher(state, entry)) manager.subscriptionsChanged(authority.name, type.typeUrl);
      };
    },
    dumpResources() {
      return csdsNow().dumpClientConfig(nodeMessage(), cache.entries(), target);
    },
    async close() {
      if (closed) return;
      closed = true;
      hold.close();
      for (const close of closers) close();
      cache.deactivate();
      manager.close();
    },
  };
}
