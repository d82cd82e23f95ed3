// The cache: the one owner of resource states (A47: authority → type → name → dynamic parameters). It creates and
// removes entries as watches come and go, answers what the channels must subscribe to, applies decoded responses
// (routing each resource to the subscriptions it is for, TP2 variants included), the does-not-exist timers and the
// outages the authority manager reports, and reports itself to CSDS and A78 metrics. What applies responses and
// timers (the constraint matcher, cache-updates.ts) comes from the protocol module, loaded before any ADS call.
import type { Ranked } from "@xdskit/constraint-matcher";
import type { XdsServerConfig } from "./bootstrap-types.js";
import type { UpdateContext } from "./cache-updates.js";
import type { CallbackQueue } from "./callback-queue.js";
import type { Clock } from "./clock.js";
import type { DecodedResource, DecodedResponse, VariantRef } from "./decoded-response.js";
import type { XdsFeatures } from "./features.js";
import type { ScopedLogger } from "./logger.js";
import {
  type MetricLabels,
  metricResourceType,
  type XdsGaugeName,
  XdsMetricName,
  type XdsMetricsRecorder,
} from "./metrics.js";
import { protocolNow } from "./protocol-loader.js";
import { authorityOfName } from "./resource-name.js";
import { parametersKey, parametersText, ResourceState, type WatcherEntry } from "./resource-state.js";
import type { XdsError } from "./xds-error.js";

/** How the variant sent without constraints ranks among the others (docs/decisions.md#ambiguous-variants). */
let unconstrainedText: string | undefined;

export interface ResourceCacheOptions {
  readonly queue: CallbackQueue;
  readonly clock: Clock;
  readonly features: XdsFeatures;
  readonly nodeId: string;
  readonly metrics: XdsMetricsRecorder;
  readonly target: string;
  readonly log: ScopedLogger;
}

export interface ResourceCache {
  /** The entry of a subscription; created in REQUESTED when new. */
  subscribe(
    authority: string,
    typeUrl: string,
    name: string,
    parameters: Readonly<Record<string, string>>,
  ): { readonly state: ResourceState; readonly created: boolean };
  /** Adds a watcher to an entry and queues what it is owed: the resource, the entry's error, then `outage`. */
  addWatcher(state: ResourceState, entry: WatcherEntry, outage: XdsError | undefined): void;
  /**
   * Removes a watcher; when it was the entry's last, removes the entry (out of CSDS and metrics at once) and returns
   * true: the subscription is over.
   */
  removeWatcher(state: ResourceState, entry: WatcherEntry): boolean;
  /** Every entry of `typeUrl` in `authority`. */
  statesOfType(authority: string, typeUrl: string): Iterable<ResourceState>;
  /** The entries of a canonical `name` of `typeUrl`, among `authorities` (only the name's own authority has any). */
  statesFor(authorities: ReadonlySet<string>, typeUrl: string, name: string): ResourceState[];
  /** What a server serving `authorities` must subscribe to for `typeUrl`, in a stable order. */
  subscriptionsOf(authorities: Iterable<string>, typeUrl: string): ResourceState[];
  /** The types with at least one entry among `authorities`. */
  typesOf(authorities: Iterable<string>): string[];
  /** A71: an entry of `authority` still waits for its first answer (known not to exist counts as answered). */
  hasUncached(authority: string): boolean;
  /** Applies a response from `server`, which serves `authorities`; runs inside a callback group. */
  apply(authorities: ReadonlySet<string>, server: XdsServerConfig, response: DecodedResponse): void;
  /** A does-not-exist timer armed by a call on `server` fired. */
  expire(state: ResourceState, server: XdsServerConfig, transient: boolean): void;
  /** Every server of `authority` is unreachable: tell its watchers (ambient where cached). */
  outageStarted(authority: string, error: XdsError): void;
  /** `authority` is reachable again: the ambient errors its outage caused are over. */
  outageEnded(authority: string): void;
  /** Every entry, for CSDS. */
  entries(): Iterable<ResourceState>;
  /** A78 `grpc.xds_client.resources`, by authority, type, cache state and dynamic parameters. */
  recordGauges(record: (name: XdsGaugeName, value: number, labels: MetricLabels) => void): void;
  /** No watcher is called any more (the client closed). */
  deactivate(): void;
}

type ByParameters = Map<string, ResourceState>;
type ByName = Map<string, ByParameters>;
type ByType = Map<string, ByName>;

export function createResourceCache(options: ResourceCacheOptions): ResourceCache {
  const { queue, features, log } = options;
  const authorities = new Map<string, ByType>();
  const contexts = new Map<string, UpdateContext>();

  function contextFor(server: XdsServerConfig): UpdateContext {
    let context = contexts.get(server.key);
    if (!context) {
      context = { server, features, nodeId: options.nodeId, clock: options.clock, log };
      contexts.set(server.key, context);
    }
    return context;
  }

  function* statesOfType(authority: string, typeUrl: string): Generator<ResourceState> {
    const byName = authorities.get(authority)?.get(typeUrl);
    if (!byName) return;
    for (const byParameters of byName.values()) yield* byParameters.values();
  }

  function* entries(): Generator<ResourceState> {
    for (const byType of authorities.values()) {
      for (const byName of byType.values()) for (const byParameters of byName.values()) yield* byParameters.values();
    }
  }

  /** The subscriptions of a name a server serves, by their parameters (the cache's own map: read, never kept). */
  function subscriptionsOf(served: ReadonlySet<string>, typeUrl: string, name: string): ByParameters | undefined {
    const authority = authorityOfName(name);
    if (authority === undefined || !served.has(authority)) return undefined;
    return authorities.get(authority)?.get(typeUrl)?.get(name);
  }

  function statesFor(served: ReadonlySet<string>, typeUrl: string, name: string): ResourceState[] {
    const byParameters = subscriptionsOf(served, typeUrl, name);
    return byParameters ? [...byParameters.values()] : [];
  }

  /** The subscriptions a removal or an error is for: those holding its variant, or holding none and matching it. */
  function holders(candidates: readonly ResourceState[], ref: VariantRef): ResourceState[] {
    const { matches } = protocolNow();
    return candidates.filter((state) =>
      state.variant !== undefined
        ? state.variant.key === ref.variant.key
        : ref.constraints.kind === "true" || matches(ref.constraints, state.parameters),
    );
  }

  /**
   * Routes resources to entries. Unconstrained resources reach every subscription of their name. When some carry
   * TP2 constraints, each subscription gets the one variant its parameters match; when several match, the most
   * specific wins, ties broken by canonical text, and the ambiguity is logged and counted
   * (docs/decisions.md#ambiguous-variants).
   */
  function applyResources(
    context: UpdateContext,
    served: ReadonlySet<string>,
    response: DecodedResponse,
    seen: Set<ResourceState> | undefined,
  ): void {
    const { typeUrl, version } = response;
    const { applyResource, canonicalText, comparePreference, matches, specificity, TRUE } = protocolNow();
    if (!response.resources.some((d) => d.constraints.kind !== "true")) {
      // The common case walks the cache's maps directly: a response of 10,000 resources makes no array per name.
      // Applying queues the watchers' callbacks, so nothing subscribes or unsubscribes meanwhile.
      for (const d of response.resources) {
        const states = subscriptionsOf(served, typeUrl, d.name);
        if (states === undefined) continue;
        for (const state of states.values()) {
          seen?.add(state);
          applyResource(context, state, d, d.version ?? version);
        }
      }
      return;
    }
    unconstrainedText ??= canonicalText(TRUE);
    const best = new Map<ResourceState, { d: DecodedResource; rank: Ranked; count: number }>();
    for (const d of response.resources) {
      // An unconstrained resource ranks by the canonical text of TRUE, as the matcher and servers rank it.
      const text = d.constraints.kind === "true" ? unconstrainedText : d.variant.key;
      const rank = { specificity: specificity(d.constraints), canonicalText: text };
      for (const state of statesFor(served, typeUrl, d.name)) {
        if (d.constraints.kind !== "true" && !matches(d.constraints, state.parameters)) continue;
        const held = best.get(state);
        if (!held) best.set(state, { d, rank, count: 1 });
        else {
          held.count += 1;
          if (comparePreference(rank, held.rank) < 0) {
            held.d = d;
            held.rank = rank;
          }
        }
      }
    }
    let ambiguous = 0;
    for (const [state, { d, rank, count }] of best) {
      if (count > 1) {
        ambiguous += 1;
        log.warn(
          `${count} variants of ${state.name} match parameters {${parametersText(state.parameters)}}; using the most specific: ${rank.canonicalText}`,
        );
      }
      seen?.add(state);
      applyResource(context, state, d, d.version ?? version);
    }
    if (ambiguous > 0) {
      options.metrics.addCounter(XdsMetricName.resourceVariantsAmbiguous, ambiguous, {
        "grpc.target": options.target,
        "grpc.xds.server": context.server.serverUri,
        "grpc.xds.resource_type": metricResourceType(typeUrl),
      });
    }
  }

  return {
    subscribe(authority, typeUrl, name, parameters) {
      let byType = authorities.get(authority);
      if (!byType) {
        byType = new Map();
        authorities.set(authority, byType);
      }
      let byName = byType.get(typeUrl);
      if (!byName) {
        byName = new Map();
        byType.set(typeUrl, byName);
      }
      let byParameters = byName.get(name);
      if (!byParameters) {
        byParameters = new Map();
        byName.set(name, byParameters);
      }
      const key = parametersKey(parameters);
      const existing = byParameters.get(key);
      if (existing) return { state: existing, created: false };
      const state = new ResourceState(authority, typeUrl, name, Object.freeze({ ...parameters }), key, queue);
      byParameters.set(key, state);
      return { state, created: true };
    },
    addWatcher(state, entry, outage) {
      state.watchers.add(entry);
      state.catchUp(entry, outage?.withContext({ resource: { typeUrl: state.typeUrl, name: state.name } }));
    },
    removeWatcher(state, entry) {
      entry.active = false;
      if (!state.watchers.delete(entry) || state.watchers.size > 0) return false;
      const byType = authorities.get(state.authority);
      const byName = byType?.get(state.typeUrl);
      const byParameters = byName?.get(state.name);
      if (!byType || !byName || byParameters?.get(state.parametersKey) !== state) return false;
      byParameters.delete(state.parametersKey);
      if (byParameters.size === 0) byName.delete(state.name);
      if (byName.size === 0) byType.delete(state.typeUrl);
      return true;
    },
    statesOfType,
    statesFor,
    subscriptionsOf(served, typeUrl) {
      const out: ResourceState[] = [];
      for (const authority of served) for (const state of statesOfType(authority, typeUrl)) out.push(state);
      return out;
    },
    typesOf(served) {
      const types = new Set<string>();
      for (const authority of served) {
        const byType = authorities.get(authority);
        if (byType) for (const typeUrl of byType.keys()) types.add(typeUrl);
      }
      return [...types];
    },
    hasUncached(authority) {
      const byType = authorities.get(authority);
      if (!byType) return false;
      for (const typeUrl of byType.keys())
        for (const state of statesOfType(authority, typeUrl)) if (state.isWaiting()) return true;
      return false;
    },
    apply(served, server, response) {
      const { applyDeletion, applyResourceError } = protocolNow();
      const context = contextFor(server);
      const { typeUrl, version } = response;
      // SotW LDS/CDS: which subscriptions the response gave something to (a resource, valid or not, or an error).
      const complete = response.stateOfTheWorld && response.type.allResourcesRequiredInSotW;
      const seen = complete ? new Set<ResourceState>() : undefined;
      applyResources(context, served, response, seen);
      for (const removal of response.removals) {
        for (const state of holders(statesFor(served, typeUrl, removal.name), removal)) {
          applyDeletion(context, state, version);
        }
      }
      for (const entry of response.resourceErrors) {
        for (const state of holders(statesFor(served, typeUrl, entry.name), entry)) {
          seen?.add(state);
          applyResourceError(context, state, entry.variant, entry.code, entry.message, version);
        }
      }
      if (seen) {
        // An LDS/CDS response lists every resource: a cached subscription it gave nothing to was deleted, unless it
        // holds a server error, which a TP3 server sends once (docs/decisions.md#status-codes-and-errors).
        for (const authority of served) {
          for (const byParameters of authorities.get(authority)?.get(typeUrl)?.values() ?? []) {
            for (const state of byParameters.values()) {
              if (state.resource === undefined || seen.has(state) || state.state === "received_error") continue;
              applyDeletion(context, state, version);
            }
          }
        }
      }
      const labels = {
        "grpc.target": options.target,
        "grpc.xds.server": server.serverUri,
        "grpc.xds.resource_type": metricResourceType(typeUrl),
      };
      if (response.valid > 0) options.metrics.addCounter(XdsMetricName.resourceUpdatesValid, response.valid, labels);
      if (response.invalid > 0) {
        options.metrics.addCounter(XdsMetricName.resourceUpdatesInvalid, response.invalid, labels);
      }
    },
    expire(state, server, transient) {
      const { applyTimeout } = protocolNow();
      queue.grouped(() => applyTimeout(contextFor(server), state, transient));
    },
    outageStarted(authority, error) {
      const byType = authorities.get(authority);
      if (!byType) return;
      for (const typeUrl of byType.keys()) {
        for (const state of statesOfType(authority, typeUrl)) {
          state.notifyConnectivity(error.withContext({ resource: { typeUrl, name: state.name } }));
        }
      }
    },
    outageEnded(authority) {
      const byType = authorities.get(authority);
      if (!byType) return;
      for (const typeUrl of byType.keys()) {
        for (const state of statesOfType(authority, typeUrl)) if (state.error === undefined) state.notifyCleared();
      }
    },
    entries,
    recordGauges(record) {
      const counts = new Map<string, { labels: Record<string, string>; n: number }>();
      for (const state of entries()) {
        const cacheState = state.cacheStateLabel();
        const parameters = parametersText(state.parameters);
        const key = `${state.authority}\u0000${state.typeUrl}\u0000${cacheState}\u0000${state.parametersKey}`;
        const entry = counts.get(key);
        if (entry) entry.n += 1;
        else {
          counts.set(key, {
            labels: {
              "grpc.target": options.target,
              "grpc.xds.authority": state.authority,
              "grpc.xds.resource_type": metricResourceType(state.typeUrl),
              "grpc.xds.cache_state": cacheState,
              ...(parameters === "" ? {} : { "grpc.xds.dynamic_parameters": parameters }),
            },
            n: 1,
          });
        }
      }
      for (const { labels, n } of counts.values()) record(XdsMetricName.resources, n, labels);
    },
    deactivate() {
      for (const state of entries()) for (const entry of state.watchers) entry.active = false;
    },
  };
}
