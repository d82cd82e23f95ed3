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
import { XdsChannel } from "./xds-channel.js";
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
      channel = new XdsChannel(server, transport, channelContext, logger.child(`[xds server ${server.serverUri}]`));
      channels.set(server.key, channel);
    }
    return channel;
  }

  function authorityFor(name: string): { authority: AuthorityState; channel: XdsChannel } | undefined {
    let authority = authorities.get(name);
    if (!authority) {
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
      authority = { name, servers, defaultParameters, resources: new Map() };
      authorities.set(name, authority);
    }
    // A71 fallback is not implemented yet: each authority uses its first server.
    const channel = channelFor(authority.servers[0]!);
    channel.authorities.add(authority);
    return { authority, channel };
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
      const found = authorityFor(parsed.authority);
      if (!found) {
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
      const { authority, channel } = found;
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
        state = new ResourceState(type.typeUrl, parsed.name, Object.freeze({ ...parameters }), key, queue);
        byParameters.set(key, state);
        const down = channel.connectivityError;
        if (down) state.error = down.withContext({ resource: { typeUrl: type.typeUrl, name: parsed.name } });
        channel.subscriptionsChanged(type.typeUrl);
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
        channel.cancelTimer(owned);
        variants.delete(key);
        if (variants.size === 0) names.delete(owned.name);
        if (names.size === 0) authority.resources.delete(type.typeUrl);
        channel.subscriptionsChanged(type.typeUrl);
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
