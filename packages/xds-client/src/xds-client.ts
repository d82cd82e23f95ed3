// createXdsClient: the watch API over authorities (A47), the shared cache and the pool of server channels.
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type { ClientConfig } from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import type { AuthorityState, NameTable } from "./authority.js";
import { loadBootstrap } from "./bootstrap.js";
import type { Bootstrap, XdsServerConfig } from "./bootstrap-types.js";
import { createCallbackQueue } from "./callback-queue.js";
import { type Clock, systemClock } from "./clock.js";
import { dumpClientConfig } from "./csds-dump.js";
import { resolveFeatures, type XdsFeatures } from "./features.js";
import { type Logger, noopLogger, scopeLogger } from "./logger.js";
import { noopMetrics, XdsMetricName, type XdsMetricsRecorder } from "./metrics.js";
import { buildNode } from "./node.js";
import { OLD_STYLE_AUTHORITY, parseResourceName } from "./resource-name.js";
import { parametersKey, ResourceState, type ResourceWatcher, type WatcherEntry } from "./resource-state.js";
import type { ResourceType } from "./resource-type.js";
import { createConnectTransport, DEFAULT_MAX_RECEIVE_MESSAGE_BYTES, type XdsTransportFactory } from "./transport.js";
import { type ChannelEvents, XdsChannel } from "./xds-channel.js";
import { StatusCode, XdsError } from "./xds-error.js";

export interface WatchOptions {
  /**
   * A67/TP2: the dynamic parameters to subscribe with, replacing the bootstrap's for this name. Each distinct map
   * is its own subscription and cache entry.
   */
  readonly dynamicParameters?: Readonly<Record<string, string>>;
}

export interface XdsClient {
  /** Watches one resource; returns the function that cancels the watch (idempotent). Never throws for per-watch problems. */
  watch<T>(type: ResourceType<T>, name: string, watcher: ResourceWatcher<T>, options?: WatchOptions): () => void;
  /** The cache as CSDS reports it. */
  dumpResources(): ClientConfig;
  readonly bootstrap: Bootstrap;
  readonly features: XdsFeatures;
  /** Ends every stream and timer; no callback runs afterwards. */
  close(): Promise<void>;
}

export interface XdsClientOptions {
  /** The bootstrap as an object or JSON text; default: `GRPC_XDS_BOOTSTRAP` (a file), then `GRPC_XDS_BOOTSTRAP_CONFIG`. */
  readonly bootstrap?: unknown;
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
  /** Opens streams to a server; default gRPC over HTTP/2 with connect-node. */
  readonly transportFactory?: XdsTransportFactory;
}

/** Time and randomness, for tests (see `./internal`). */
export interface XdsClientInternals {
  readonly clock?: Clock;
  readonly random?: () => number;
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
  const logger = scopeLogger(options.logger ?? noopLogger, "[xds-client]");
  const metrics = options.metrics ?? noopMetrics;
  const target = options.target ?? "#server";
  const queue = createCallbackQueue((error) =>
    logger.error(`a watcher threw: ${(error as Error)?.stack ?? String(error)}`),
  );
  const node: Node = buildNode(bootstrap.node);
  const types = new Map<string, ResourceType<unknown>>();
  const channels = new Map<string, XdsChannel>();
  const authorities = new Map<string, AuthorityState>();
  const transportFactory = options.transportFactory ?? createConnectTransport;
  const maxReceiveMessageBytes = options.maxReceiveMessageBytes ?? DEFAULT_MAX_RECEIVE_MESSAGE_BYTES;
  const channelContext = {
    bootstrap,
    features,
    clock: internals.clock ?? systemClock,
    random: internals.random ?? Math.random,
    queue,
    metrics,
    target,
    node,
    types,
  };
  let closed = false;
  const closers: (() => void)[] = [];

  function channelFor(server: XdsServerConfig): XdsChannel {
    let channel = channels.get(server.key);
    if (!channel) {
      const transport = transportFactory(server, { maxReceiveMessageBytes });
      channel = new XdsChannel(
        server,
        transport,
        channelContext,
        channelEvents,
        logger.child(`[xds server ${server.serverUri}]`),
      );
      channels.set(server.key, channel);
    }
    return channel;
  }

  function forEachState(authority: AuthorityState, visit: (state: ResourceState) => void): void {
    for (const table of authority.resources.values()) {
      for (const byParameters of table.values()) for (const state of byParameters.values()) visit(state);
    }
  }

  /** A71: a resource is "cached" for fallback purposes when it has a value or is known not to exist. */
  function hasUncached(authority: AuthorityState): boolean {
    let uncached = false;
    forEachState(authority, (state) => {
      if (state.resource === undefined && state.state !== "does_not_exist") uncached = true;
    });
    return uncached;
  }

  function subscribeAll(authority: AuthorityState, channel: XdsChannel): void {
    for (const typeUrl of authority.resources.keys()) channel.subscriptionsChanged(typeUrl);
  }

  const channelEvents: ChannelEvents = {
    onConnectivityFailure(channel, error) {
      for (const authority of authorities.values()) {
        const position = authority.active.indexOf(channel);
        if (position < 0) continue;
        const next = authority.servers[authority.active.length];
        if (features.fallback && position === authority.active.length - 1 && next && hasUncached(authority)) {
          // Fall back: subscribe everything on the next server; the failing ones keep retrying.
          const fallback = channelFor(next);
          logger.info(
            `authority ${authority.name}: falling back from ${channel.server.serverUri} to ${next.serverUri}`,
          );
          authority.active.push(fallback);
          fallback.authorities.add(authority);
          subscribeAll(authority, fallback);
          continue;
        }
        // Watchers hear of it only once every server in use is unreachable.
        if (currentOutage(authority) === undefined) continue;
        forEachState(authority, (state) => {
          state.notifyError(error.withContext({ resource: { typeUrl: state.typeUrl, name: state.name } }));
        });
      }
    },
    onResponse(channel) {
      for (const authority of authorities.values()) {
        const position = authority.active.indexOf(channel);
        if (position < 0 || position === authority.active.length - 1) continue;
        // A higher-priority server is back: drop the lower-priority ones.
        for (const dropped of authority.active.splice(position + 1)) {
          logger.info(
            `authority ${authority.name}: back on ${channel.server.serverUri}; leaving ${dropped.server.serverUri}`,
          );
          dropped.authorities.delete(authority);
          subscribeAll(authority, dropped);
        }
      }
    },
  };

  function authorityFor(name: string): AuthorityState | undefined {
    let authority = authorities.get(name);
    if (authority) return authority;
    let servers: readonly XdsServerConfig[];
    let defaultParameters: Readonly<Record<string, string>>;
    if (name === OLD_STYLE_AUTHORITY) {
      servers = bootstrap.xdsServers;
      defaultParameters = bootstrap.dynamicParameters;
    } else {
      const config = bootstrap.authorities.get(name);
      if (!config) return undefined;
      servers = config.xdsServers ?? bootstrap.xdsServers;
      defaultParameters = config.dynamicParameters;
    }
    // A71 off: only the first server of each list is used.
    if (!features.fallback) servers = servers.slice(0, 1);
    const first = channelFor(servers[0]!);
    authority = { name, servers, defaultParameters, resources: new Map(), active: [first] };
    first.authorities.add(authority);
    authorities.set(name, authority);
    return authority;
  }

  /** The error a new subscription starts with: set while every server the authority uses is unreachable. */
  function currentOutage(authority: AuthorityState): XdsError | undefined {
    const last = authority.active[authority.active.length - 1]!;
    return authority.active.every((c) => c.connectivityError !== undefined) ? last.connectivityError : undefined;
  }

  function failWatch(watcher: ResourceWatcher<unknown>, error: XdsError): () => void {
    const entry: WatcherEntry = { watcher, active: true };
    queue.push(() => (entry.active ? watcher.onResourceChanged({ ok: false, error }) : undefined));
    return () => {
      entry.active = false;
    };
  }

  if (metrics.registerGauges) {
    const unregister = metrics.registerGauges((record) => {
      for (const channel of channels.values()) {
        record(XdsMetricName.connected, channel.connected ? 1 : 0, {
          "grpc.target": target,
          "grpc.xds.server": channel.server.serverUri,
        });
      }
      const counts = new Map<string, { labels: Record<string, string>; n: number }>();
      for (const authority of authorities.values()) {
        for (const [typeUrl, table] of authority.resources) {
          for (const byParameters of table.values()) {
            for (const state of byParameters.values()) {
              const cacheState = state.cacheStateLabel();
              const key = `${authority.name}\u0000${typeUrl}\u0000${cacheState}`;
              const entry = counts.get(key);
              if (entry) entry.n += 1;
              else {
                counts.set(key, {
                  labels: {
                    "grpc.target": target,
                    "grpc.xds.authority": authority.name,
                    "grpc.xds.resource_type": typeUrl,
                    "grpc.xds.cache_state": cacheState,
                  },
                  n: 1,
                });
              }
            }
          }
        }
      }
      for (const { labels, n } of counts.values()) record(XdsMetricName.resources, n, labels);
    });
    closers.push(unregister);
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
      const known = types.get(type.typeUrl);
      if (known === undefined) types.set(type.typeUrl, type as ResourceType<unknown>);
      else if (known !== type)
        logger.warn(`two resource types share ${type.typeUrl}; the first one registered decodes`);
      const typeName = type.typeUrl.slice(type.typeUrl.lastIndexOf("/") + 1);
      if (name.startsWith("xdstp:") && !features.federation) {
        return failWatch(
          untyped,
          new XdsError(
            StatusCode.INVALID_ARGUMENT,
            "invalid_name",
            `xdstp name "${name}" used with federation disabled`,
            { nodeId, resource },
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
      const authority = authorityFor(parsed.authority);
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
      const parameters =
        watchOptions?.dynamicParameters ?? (features.dynamicParameters ? authority.defaultParameters : {});
      const key = parametersKey(parameters);
      let table: NameTable | undefined = authority.resources.get(type.typeUrl);
      if (!table) {
        table = new Map();
        authority.resources.set(type.typeUrl, table);
      }
      let byParameters = table.get(parsed.name);
      if (!byParameters) {
        byParameters = new Map();
        table.set(parsed.name, byParameters);
      }
      let state = byParameters.get(key);
      if (!state) {
        state = new ResourceState(
          type.typeUrl,
          parsed.name,
          Object.freeze({ ...parameters }),
          key,
          queue,
          channelContext.clock,
        );
        byParameters.set(key, state);
        const down = currentOutage(authority);
        if (down) state.error = down.withContext({ resource: { typeUrl: type.typeUrl, name: parsed.name } });
        for (const channel of authority.active) channel.subscriptionsChanged(type.typeUrl);
      }
      const entry: WatcherEntry = { watcher: untyped, active: true };
      state.watchers.add(entry);
      state.catchUp(entry);
      const owned = state;
      const names = table;
      const variants = byParameters;
      return () => {
        if (!entry.active) return;
        entry.active = false;
        owned.watchers.delete(entry);
        if (owned.watchers.size > 0) return;
        // Unsubscribed: out of the cache, CSDS and metrics at once.
        owned.cancelTimer();
        variants.delete(key);
        if (variants.size === 0) names.delete(owned.name);
        if (names.size === 0) authority.resources.delete(type.typeUrl);
        for (const channel of authority.active) channel.subscriptionsChanged(type.typeUrl);
      };
    },
    dumpResources() {
      return dumpClientConfig(node, authorities.values(), target);
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const close of closers) close();
      for (const authority of authorities.values()) {
        for (const table of authority.resources.values()) {
          for (const byParameters of table.values()) {
            for (const state of byParameters.values()) for (const entry of state.watchers) entry.active = false;
          }
        }
      }
      for (const channel of channels.values()) channel.close();
    },
  };
}
