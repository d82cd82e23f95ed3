// Authorities (A47) and the servers they use (A71): which channel serves which authority, falling back to the next
// server while a watched resource is uncached, switching back when a higher-priority server answers, and telling
// watchers of an outage only once every server in use is unreachable. Channels are pooled by server config (A47:
// identical configs share one) and closed when no authority uses them. The manager is every channel's host: it
// answers what a channel must subscribe to and hands each response to the cache.
import type { AuthorityConfig, Bootstrap, XdsServerConfig } from "../bootstrap/bootstrap-types.js";
import type { ResourceCache } from "../cache/resource-cache-types.js";
import type { ChannelHost, XdsChannel } from "../channel/xds-channel.js";
import type { ScopedLogger } from "../observability/logger.js";
import { type MetricLabels, type XdsGaugeName, XdsMetricName } from "../observability/metrics.js";
import type { XdsFeatures } from "../shared/features.js";
import { OLD_STYLE_AUTHORITY } from "../shared/resource-name.js";
import type { XdsError } from "../shared/xds-error.js";
import type { ResourceState } from "../state/resource-state.js";
import type { DecodedResponse } from "../wire/decoded-response.js";
import type { ResourceType } from "../wire/resource-type.js";

/** What a watch needs to know of its authority. */
export interface Authority {
  /** The authority name, or `#old` for old-style names. */
  readonly name: string;
  /** A67: parameters subscribed with by default (bootstrap root map for `#old`, the authority's map otherwise). */
  readonly defaultParameters: Readonly<Record<string, string>>;
}

interface AuthorityState extends Authority {
  readonly servers: readonly XdsServerConfig[];
  /**
   * The channels in use, in server priority order: the first server, then each fallback started because every
   * server before it failed while a watched resource was uncached (A71). Never empty.
   */
  readonly active: XdsChannel[];
  /** Set while every server in use is unreachable and the watchers were told so. */
  outage: XdsError | undefined;
}

export interface AuthorityManagerOptions {
  readonly bootstrap: Bootstrap;
  readonly features: XdsFeatures;
  readonly cache: ResourceCache;
  readonly target: string;
  readonly log: ScopedLogger;
  readonly typeOf: (typeUrl: string) => ResourceType<unknown> | undefined;
  /** Opens a channel to a server; the manager is its host. */
  readonly createChannel: (server: XdsServerConfig, host: ChannelHost) => XdsChannel;
}

export interface AuthorityManager {
  /** The authority of that name (set up on first use), or undefined when the bootstrap does not know it. */
  authority(name: string): Authority | undefined;
  /** The subscriptions of `typeUrl` in `authority` changed: every server the authority uses updates them. */
  subscriptionsChanged(authority: string, typeUrl: string): void;
  /** The error a new subscription in `authority` starts with, while every server it uses is unreachable. */
  outage(authority: string): XdsError | undefined;
  /** A78 `grpc.xds_client.connected`, for every server in use. */
  recordGauges(record: (name: XdsGaugeName, value: number, labels: MetricLabels) => void): void;
  close(): void;
}

export function createAuthorityManager(options: AuthorityManagerOptions): AuthorityManager {
  const { bootstrap, features, cache, log } = options;
  const authorities = new Map<string, AuthorityState>();
  const pool = new Map<string, XdsChannel>();
  /** Channel → the names of the authorities it serves. */
  const served = new Map<XdsChannel, Set<string>>();
  const none: ReadonlySet<string> = new Set();
  const servedBy = (channel: XdsChannel): ReadonlySet<string> => served.get(channel) ?? none;

  function use(server: XdsServerConfig, authority: string): XdsChannel {
    let channel = pool.get(server.key);
    if (!channel) {
      channel = options.createChannel(server, host);
      pool.set(server.key, channel);
      served.set(channel, new Set());
    }
    served.get(channel)!.add(authority);
    return channel;
  }

  /** The authority no longer uses `channel`: it drops the authority's subscriptions, or closes when unused. */
  function release(channel: XdsChannel, authority: string): void {
    const names = served.get(channel);
    if (!names) return;
    names.delete(authority);
    if (names.size > 0) {
      for (const typeUrl of cache.typesOf([authority])) channel.subscriptionsChanged(typeUrl);
      return;
    }
    served.delete(channel);
    pool.delete(channel.server.key);
    channel.close();
  }

  function subscribeAll(authority: AuthorityState, channel: XdsChannel): void {
    for (const typeUrl of cache.typesOf([authority.name])) channel.subscriptionsChanged(typeUrl);
  }

  function authoritiesOf(channel: XdsChannel): AuthorityState[] {
    return [...servedBy(channel)].map((name) => authorities.get(name)!);
  }

  const host: ChannelHost = {
    subscriptions: (channel, typeUrl) => cache.subscriptionsOf(servedBy(channel), typeUrl),
    subscribedTypes: (channel) => cache.typesOf(servedBy(channel)),
    coveredVersions: (channel, typeUrl) => cache.coveredVersions(servedBy(channel), typeUrl),
    typeOf: options.typeOf,
    onResponse(channel: XdsChannel, response: DecodedResponse) {
      const recovered: string[] = [];
      for (const authority of authoritiesOf(channel)) {
        const position = authority.active.indexOf(channel);
        if (position < 0) continue;
        // A higher-priority server is back: drop the lower-priority ones.
        for (const dropped of authority.active.splice(position + 1)) {
          log.info(
            `authority ${authority.name}: back on ${channel.server.serverUri}; leaving ${dropped.server.serverUri}`,
          );
          release(dropped, authority.name);
        }
        if (authority.outage !== undefined) {
          authority.outage = undefined;
          recovered.push(authority.name);
        }
      }
      cache.apply(servedBy(channel), channel.server, response);
      // After the response: a resource it changed was the recovery signal for its watchers, which are owed nothing
      // more; the others hear that the outage is over (docs/decisions.md#the-watcher-api).
      for (const name of recovered) cache.outageEnded(name);
    },
    onConnectivityFailure(channel, error) {
      for (const authority of authoritiesOf(channel)) {
        const position = authority.active.indexOf(channel);
        const next = authority.servers[authority.active.length];
        if (position === authority.active.length - 1 && next && cache.hasUncached(authority.name)) {
          // Fall back: subscribe everything on the next server; the failing ones keep retrying.
          log.info(`authority ${authority.name}: falling back from ${channel.server.serverUri} to ${next.serverUri}`);
          const fallback = use(next, authority.name);
          authority.active.push(fallback);
          subscribeAll(authority, fallback);
          continue;
        }
        // Watchers hear of it only once every server in use is unreachable.
        if (!authority.active.every((c) => c.connectivityError !== undefined)) continue;
        authority.outage = error;
        cache.outageStarted(authority.name, error);
      }
    },
    expired: (channel, state: ResourceState, transient) => cache.expire(state, channel.server, transient),
  };

  return {
    authority(name) {
      const known = authorities.get(name);
      if (known) return known;
      let config: AuthorityConfig | undefined;
      if (name !== OLD_STYLE_AUTHORITY) {
        config = bootstrap.authorities.get(name);
        if (!config) return undefined;
      }
      let servers = config?.xdsServers ?? bootstrap.xdsServers;
      // A71 off: only the first server of each list is used.
      if (!features.fallback) servers = servers.slice(0, 1);
      const authority: AuthorityState = {
        name,
        servers,
        defaultParameters: config ? config.dynamicParameters : bootstrap.dynamicParameters,
        active: [],
        outage: undefined,
      };
      authority.active.push(use(servers[0]!, name));
      authorities.set(name, authority);
      return authority;
    },
    subscriptionsChanged(name, typeUrl) {
      for (const channel of authorities.get(name)?.active ?? []) channel.subscriptionsChanged(typeUrl);
    },
    outage: (name) => authorities.get(name)?.outage,
    recordGauges(record) {
      for (const channel of pool.values()) {
        record(XdsMetricName.connected, channel.connected ? 1 : 0, {
          "grpc.target": options.target,
          "grpc.xds.server": channel.server.serverUri,
        });
      }
    },
    close() {
      for (const channel of pool.values()) channel.close();
      pool.clear();
      served.clear();
    },
  };
}
