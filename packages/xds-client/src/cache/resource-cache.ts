// The cache: the one owner of resource states (A47: authority → type → name → dynamic parameters). It creates and
// removes entries as watches come and go, answers what the channels must subscribe to, applies decoded responses
// (routing each resource to the subscriptions it is for, TP2 variants included), the does-not-exist timers and the
// outages the authority manager reports, and reports itself to CSDS and A78 metrics. What applies responses and
// timers (the constraint matcher, cache-updates.ts) comes from the protocol module, loaded before any ADS call.
import type { XdsServerConfig } from "../bootstrap/bootstrap-types.js";
import { metricResourceType, XdsMetricName } from "../observability/metrics.js";
import type { UpdateContext } from "../protocol/cache-updates.js";
import { protocolNow } from "../protocol/protocol-loader.js";
import { authorityOfName, OLD_STYLE_AUTHORITY } from "../shared/resource-name.js";
import { parametersKey, parametersText, ResourceState, type WatcherEntry } from "../state/resource-state.js";
import type { DecodedResponse } from "../wire/decoded-response.js";
import type { ResourceCache, ResourceCacheOptions } from "./resource-cache-types.js";
import { recordResourceGauges } from "./resource-gauges.js";
import { SeenMarks } from "./seen-marks.js";
import { type NameSubscriptions, OneSubscription } from "./subscriptions.js";
import { createVariantRouting } from "./variant-routing.js";
import { isCovering, WILDCARD, WildcardState } from "./wildcard-state.js";

/** The subscriptions of one name by their parameters key (subscriptions.ts). */
type ByParameters = NameSubscriptions;
type ByName = Map<string, ByParameters>;

const NO_PARAMETERS: Readonly<Record<string, string>> = Object.freeze({});
const NO_WILDCARDS: readonly WildcardState[] = Object.freeze([]) as readonly WildcardState[];
const NO_STATES: readonly ResourceState[] = Object.freeze([]) as readonly ResourceState[];
type ByType = Map<string, ByName>;

/** Whether an entry goes in requests by its name: a wildcard's `*`, or a name some watch holds (not only a wildcard). */
function isRequested(state: ResourceState): boolean {
  return state instanceof WildcardState || state.hasWatcher(ownWatch);
}

const ownWatch = (entry: WatcherEntry): boolean => !isCovering(entry);

/** The subscriptions the resources of a type's last response reached, by index, and among which authorities. */
interface Reached {
  readonly served: readonly string[];
  readonly subscriptions: (NameSubscriptions | undefined)[];
}

/** The name a name's subscriptions are of. */
function nameOf(subscriptions: NameSubscriptions): string {
  return subscriptions instanceof OneSubscription
    ? subscriptions.state.name
    : subscriptions.values().next().value!.name;
}

function sameAuthorities(list: readonly string[], served: ReadonlySet<string>): boolean {
  if (list.length !== served.size) return false;
  let i = 0;
  for (const authority of served) if (authority !== list[i++]) return false;
  return true;
}

export function createResourceCache(options: ResourceCacheOptions): ResourceCache {
  const { queue, features, log } = options;
  const authorities = new Map<string, ByType>();
  const contexts = new Map<string, UpdateContext>();
  /** Moves on whenever an entry is created or removed: a list of entries made before is stale. */
  let generation = 0;
  /**
   * Per type, the subscriptions the resources of its last response reached, by index (a SotW re-push carries the same
   * resources at the same indexes: docs/architecture.md#the-byte-identical-skip): a resource whose name is that of
   * the subscriptions at its index is not looked up again. Forgotten when an entry of the type is created or removed,
   * so what it holds is what a lookup would find.
   */
  const reached = new Map<string, Reached>();
  /** The last list of each type's subscriptions (an ACK asks for it after every response), and what it is of. */
  const lists = new Map<string, { generation: number; served: string[]; states: readonly ResourceState[] }>();

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
    // `*` is the wildcard's place in the cache, never a resource's (wildcard-state.ts).
    if (name === WILDCARD) return undefined;
    const authority = authorityOfName(name);
    if (authority === undefined || !served.has(authority)) return undefined;
    return authorities.get(authority)?.get(typeUrl)?.get(name);
  }

  function statesFor(served: ReadonlySet<string>, typeUrl: string, name: string): ResourceState[] {
    const byParameters = subscriptionsOf(served, typeUrl, name);
    return byParameters ? [...byParameters.values()] : [];
  }

  /** Every subscription of `typeUrl` among `served`, in a stable order; the same array while nothing changed. */
  function listOf(served: Iterable<string>, typeUrl: string): readonly ResourceState[] {
    const authorityList = [...served];
    const last = lists.get(typeUrl);
    if (
      last?.generation === generation &&
      last.served.length === authorityList.length &&
      last.served.every((authority, i) => authority === authorityList[i])
    ) {
      return last.states;
    }
    const out: ResourceState[] = [];
    for (const authority of authorityList) {
      // A name only a wildcard holds is asked for by its `*`, not by name.
      for (const state of statesOfType(authority, typeUrl)) if (isRequested(state)) out.push(state);
    }
    lists.set(typeUrl, { generation, served: authorityList, states: out });
    return out;
  }

  /** The wildcard subscriptions of `typeUrl` among `served` (usually none). */
  function wildcardsOf(served: Iterable<string>, typeUrl: string): readonly WildcardState[] {
    let out: WildcardState[] | undefined;
    for (const authority of served) {
      for (const state of authorities.get(authority)?.get(typeUrl)?.get(WILDCARD)?.values() ?? []) {
        if (out === undefined) out = [state as WildcardState];
        else out.push(state as WildcardState);
      }
    }
    return out ?? NO_WILDCARDS;
  }

  /** Adds an entry (new, REQUESTED) to the maps. */
  function insert(state: ResourceState): void {
    const { authority, typeUrl, name } = state;
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
    const byParameters = byName.get(name);
    generation += 1;
    reached.delete(typeUrl);
    if (byParameters === undefined) byName.set(name, new OneSubscription(state));
    else if (byParameters instanceof Map) byParameters.set(state.parametersKey, state);
    else
      byName.set(
        name,
        new Map([
          [byParameters.state.parametersKey, byParameters.state],
          [state.parametersKey, state],
        ]),
      );
  }

  /** Takes an entry out of the maps (out of CSDS and metrics at once); false when it was not in them. */
  function remove(state: ResourceState): boolean {
    const byType = authorities.get(state.authority);
    const byName = byType?.get(state.typeUrl);
    const byParameters = byName?.get(state.name);
    if (!byType || !byName || byParameters?.get(state.parametersKey) !== state) return false;
    generation += 1;
    reached.delete(state.typeUrl);
    if (!(byParameters instanceof Map)) byName.delete(state.name);
    else {
      byParameters.delete(state.parametersKey);
      const [last] = byParameters.values();
      if (byParameters.size === 1 && last !== undefined) byName.set(state.name, new OneSubscription(last));
    }
    if (byName.size === 0) byType.delete(state.typeUrl);
    return true;
  }

  /**
   * The names a response gives that the wildcards of its type cover: an entry with the wildcard's parameters for
   * each (made when new, returned in `created`), covered by the wildcard. An entry already cached when first covered
   * tells the wildcard what it holds (an identical resource in the response tells nobody).
   */
  function learn(wildcards: readonly WildcardState[], response: DecodedResponse): ResourceState[] {
    const created: ResourceState[] = [];
    for (const d of response.resources) {
      const name = d.name;
      if (name === WILDCARD) continue;
      for (const wildcard of wildcards) {
        if (authorityOfName(name) !== wildcard.authority) continue;
        let state = authorities.get(wildcard.authority)?.get(wildcard.typeUrl)?.get(name)?.get(wildcard.parametersKey);
        if (state === undefined) {
          state = new ResourceState(
            wildcard.authority,
            wildcard.typeUrl,
            name,
            wildcard.parameters,
            wildcard.parametersKey,
            queue,
          );
          insert(state);
          created.push(state);
        } else if (wildcard.covered.has(state)) continue;
        const entry = wildcard.cover(state);
        if (state.resource !== undefined || state.error !== undefined) state.catchUp(entry, undefined);
      }
    }
    return created;
  }

  /**
   * After a response: the names a wildcard no longer covers (the server removed them, or a new entry got nothing,
   * its parameters matching no variant) are let go, and their entries with them when nothing else holds them.
   */
  function sweep(
    wildcards: readonly WildcardState[],
    created: readonly ResourceState[],
    candidates: Iterable<ResourceState>,
  ): void {
    for (const state of created) {
      if (state.state !== "requested") continue;
      for (const wildcard of wildcards) if (wildcard.uncover(state)) remove(state);
    }
    for (const state of candidates) {
      if (state.state !== "does_not_exist") continue;
      for (const wildcard of wildcards) if (wildcard.uncover(state) && state.watcherCount === 0) remove(state);
    }
  }

  const routing = createVariantRouting({
    reapplyIdentical: options.reapplyIdentical ?? true,
    subscriptionsOf,
    lookup(served, typeUrl, resources) {
      // Names without an authority (not xdstp) are all in one map, looked up once.
      const plain = served.has(OLD_STYLE_AUTHORITY) ? authorities.get(OLD_STYLE_AUTHORITY)?.get(typeUrl) : undefined;
      const byName = (name: string) =>
        name.startsWith("xdstp:")
          ? subscriptionsOf(served, typeUrl, name)
          : name === WILDCARD
            ? undefined
            : plain?.get(name);
      const last = reached.get(typeUrl);
      const before = last !== undefined && sameAuthorities(last.served, served) ? last : undefined;
      const now: Reached = { served: [...served], subscriptions: new Array(resources.length) };
      reached.set(typeUrl, now);
      return (i) => {
        const { name } = resources[i]!;
        const held = before?.subscriptions[i];
        const found = held !== undefined && nameOf(held) === name ? held : byName(name);
        now.subscriptions[i] = found;
        return found;
      };
    },
    ambiguous(context, state, matching, chosen) {
      log.warn(
        `${matching} variants of ${state.name} match parameters {${parametersText(state.parameters)}}; using the most specific: ${chosen}`,
      );
      options.metrics.addCounter(XdsMetricName.resourceVariantsAmbiguous, 1, {
        "grpc.target": options.target,
        "grpc.xds.server": context.server.serverUri,
        "grpc.xds.resource_type": metricResourceType(state.typeUrl),
      });
    },
  });

  return {
    subscribe(authority, typeUrl, name, parameters) {
      const key = parametersKey(parameters);
      const existing = authorities.get(authority)?.get(typeUrl)?.get(name)?.get(key);
      if (existing) {
        // A name only a wildcard held goes in requests by name from now on.
        if (isRequested(existing)) return { state: existing, created: false };
        generation += 1;
        return { state: existing, created: true };
      }
      const frozen = key === "" ? NO_PARAMETERS : Object.freeze({ ...parameters });
      const state = new ResourceState(authority, typeUrl, name, frozen, key, queue);
      insert(state);
      return { state, created: true };
    },
    subscribeWildcard(authority, typeUrl, parameters) {
      const key = parametersKey(parameters);
      const existing = authorities.get(authority)?.get(typeUrl)?.get(WILDCARD)?.get(key);
      if (existing) return { state: existing as WildcardState, created: false };
      const frozen = key === "" ? NO_PARAMETERS : Object.freeze({ ...parameters });
      const state = new WildcardState(authority, typeUrl, frozen, key, queue);
      // What the server already sent for names watched with these parameters is among what `*` covers: a delta
      // server does not send it again.
      for (const cached of statesOfType(authority, typeUrl)) {
        if (cached.parametersKey === key && cached.resource !== undefined && cached.state !== "does_not_exist") {
          state.cover(cached);
        }
      }
      insert(state);
      return { state, created: true };
    },
    addWildcardWatcher(state, entry, outage) {
      state.addWildcardWatcher(entry);
      state.catchUpWildcard(entry, outage?.withContext({ resource: { typeUrl: state.typeUrl, name: WILDCARD } }));
    },
    removeWildcardWatcher(state, entry) {
      if (!state.removeWildcardWatcher(entry)) return false;
      for (const covered of [...state.covered.keys()]) if (state.uncover(covered)) remove(covered);
      return remove(state);
    },
    *coveredVersions(served, typeUrl) {
      for (const wildcard of wildcardsOf(served, typeUrl)) {
        if (wildcard.parametersKey !== "") continue;
        for (const state of wildcard.covered.keys()) {
          if (state.resource !== undefined) yield [state.name, state.resource.version];
        }
      }
    },
    addWatcher(state, entry, outage) {
      state.addWatcher(entry);
      state.catchUp(entry, outage?.withContext({ resource: { typeUrl: state.typeUrl, name: state.name } }));
    },
    removeWatcher(state, entry) {
      entry.active = false;
      if (!state.removeWatcher(entry)) return false;
      if (state.watcherCount > 0) {
        // Still covered by a wildcard: asked for by its `*` from now on.
        if (isRequested(state)) return false;
        generation += 1;
        return true;
      }
      return remove(state);
    },
    statesOfType,
    statesFor,
    subscriptionsOf: listOf,
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
      const seen = complete ? new SeenMarks() : undefined;
      const wildcards = wildcardsOf(served, typeUrl);
      const created = wildcards.length > 0 ? learn(wildcards, response) : NO_STATES;
      routing.applyResources(context, served, response, seen);
      if (response.removals.length > 0) routing.applyRemovals(context, served, response);
      for (const entry of response.resourceErrors) {
        const states = routing.holders(statesFor(served, typeUrl, entry.name), entry);
        if (states.length > 0) routing.remember(entry);
        for (const state of states) {
          seen?.add(state);
          applyResourceError(context, state, entry.variant, entry.code, entry.message, version);
        }
      }
      // Every subscription given something: none to delete (a re-push of every resource skips the pass; with a
      // wildcard the list leaves out what it covers, and the pass always runs).
      if (seen && (wildcards.length > 0 || seen.size < listOf(served, typeUrl).length)) {
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
      if (wildcards.length > 0) {
        // What may have been removed: everything a full state covers, else the delta removals' names.
        const candidates = complete
          ? wildcards.flatMap((wildcard) => [...wildcard.covered.keys()])
          : response.removals.flatMap((removal) => statesFor(served, typeUrl, removal.name));
        sweep(wildcards, created, candidates);
        for (const wildcard of wildcards) wildcard.markAnswered();
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
      // A wildcard the server said nothing to in time: it has no resource of the type (delta sends nothing then).
      if (state instanceof WildcardState) {
        queue.grouped(() => state.markAnswered());
        return;
      }
      const { applyTimeout } = protocolNow();
      queue.grouped(() => applyTimeout(contextFor(server), state, transient));
    },
    outageStarted(authority, error) {
      const byType = authorities.get(authority);
      if (!byType) return;
      for (const typeUrl of byType.keys()) {
        for (const state of statesOfType(authority, typeUrl)) {
          // A name only wildcards hold hears of it through the wildcard, once for all of them.
          if (!isRequested(state)) continue;
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
      recordResourceGauges(entries(), options.target, record);
    },
    deactivate() {
      for (const state of entries()) for (const entry of state.watchers()) entry.active = false;
    },
  };
}
