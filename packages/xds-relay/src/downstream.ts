import { Code } from "@connectrpc/connect";
import {
  type ChangedVariants,
  InvalidRequestError,
  type ResourceSource,
  type ServedResources,
  type SourceStream,
  type TypeSubscription,
} from "@xdskit/control-plane/internal";
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type { LoadStatsRequest, LoadStatsResponse } from "@xdskit/protos/envoy/service/load_stats/v3/lrs_pb";
import { nodeView, type PerNodeNames } from "./node-view.js";
import { NO_PARAMS, type Params, paramsKey } from "./params.js";
import type { PerNodeUpstreams } from "./per-node.js";
import type { RelayTable } from "./relay-table.js";
import { NameBudgetError, type Upstream } from "./upstream.js";

interface Subscribed {
  readonly name: string;
  readonly params: Params;
  readonly paramsKey: string;
  /** Fetched on the node's own upstream stream (docs/decisions.md#relay-per-node-resources). */
  perNode: boolean;
}

interface TypeRecord {
  /** The subscription's key when last seen: the same key, the same subscriptions. */
  key: string;
  /** By the stream layer's slot key (name and parameters). */
  readonly slots: Map<string, Subscribed>;
  /** The stream's wildcards, by parameters key. */
  readonly wildcards: ReadonlyMap<string, Params>;
}

interface StreamRecord {
  readonly node: Node | undefined;
  readonly types: Map<string, TypeRecord>;
}

export interface RelaySourceOptions {
  readonly table: RelayTable;
  readonly upstream: Upstream;
  readonly perNode: PerNodeUpstreams | undefined;
  /** Types fetched per node whatever the upstream says (the DPDS type). */
  readonly perNodeTypeUrls: ReadonlySet<string>;
  /** Types whose SotW responses list every resource: those a wildcard is relayed for. */
  readonly fullStateTypeUrls: ReadonlySet<string>;
  /** Serves an LRS stream (lrs-forward.ts). */
  readonly serveLrs?: (
    requests: AsyncIterable<LoadStatsRequest>,
    signal: AbortSignal,
    peer: string | undefined,
  ) => AsyncIterable<LoadStatsResponse>;
}

/** The source as the relay drives it: also told of names the upstream marks do_not_cache. */
export interface RelaySource extends ResourceSource {
  /** The shared upstream marked a name do_not_cache: it is fetched per node from now on. */
  perNodeFrom(typeUrl: string, name: string): void;
}

/**
 * The relay as the resource source of its server (the control plane's stream layer): serves each stream from the
 * relay table (with its node's own table for what depends on the node), and turns what each downstream stream
 * subscribes to into references on upstream subscriptions, within the upstream's name budget.
 */
export function createRelaySource(options: RelaySourceOptions): RelaySource {
  const { table, upstream, perNode } = options;
  const streams = new Map<number, StreamRecord>();
  /** Names of shared types the upstream marked do_not_cache, by type. */
  const learned = new Map<string, Set<string>>();

  const perNodeNames = (typeUrl: string): PerNodeNames =>
    perNode === undefined ? undefined : options.perNodeTypeUrls.has(typeUrl) ? "all" : learned.get(typeUrl);
  const isPerNode = (typeUrl: string, name: string): boolean => {
    const names = perNodeNames(typeUrl);
    return names === "all" || names?.has(name) === true;
  };
  const viewSource = { shared: table, ownTable: (key: string) => perNode?.tableOf(key), perNodeNames };

  const acquire = (node: Node | undefined, typeUrl: string, s: Subscribed) => {
    if (s.perNode) perNode?.acquire(node, typeUrl, s.name, s.params);
    else upstream.acquire(typeUrl, s.name, s.params);
  };
  const release = (node: Node | undefined, typeUrl: string, s: Subscribed) => {
    if (s.perNode) perNode?.release(node, typeUrl, s.name, s.paramsKey);
    else upstream.release(typeUrl, s.name, s.paramsKey);
  };

  /** The new subscriptions must fit the upstream names of their type (nothing is subscribed otherwise). */
  const checkBudget = (
    node: Node | undefined,
    sub: TypeSubscription,
    added: readonly Subscribed[],
    addedWildcards: readonly string[],
  ) => {
    const shared = new Set<string>();
    let own = 0;
    for (const s of added) {
      if (s.perNode) own++;
      else if (!upstream.has(sub.typeUrl, s.name, s.paramsKey)) shared.add(`${s.name.length}:${s.name}${s.paramsKey}`);
    }
    const wildcardsNew = addedWildcards.filter((key) => !upstream.hasWildcard(sub.typeUrl, key)).length;
    try {
      upstream.makeRoom(sub.typeUrl, shared.size + wildcardsNew);
      if (own > 0) perNode?.makeRoom(node, sub.typeUrl, own);
    } catch (error) {
      // docs/decisions.md#relay-upstream-name-budget
      if (error instanceof NameBudgetError) throw new InvalidRequestError(error.message, Code.ResourceExhausted);
      throw error;
    }
  };

  return {
    resources: table,
    resolve(node) {
      return perNode === undefined ? table : (nodeView(viewSource, perNode.keyOf(node)) as ServedResources);
    },
    attach(changed: (changed: ChangedVariants) => void) {
      table.attach(changed);
      perNode?.attach(changed);
    },
    subscribed(stream: SourceStream, sub: TypeSubscription) {
      let record = streams.get(stream.id);
      const types = record?.types;
      const previous = types?.get(sub.typeUrl);
      if (previous?.key === sub.key) return;
      const typeUrl = sub.typeUrl;
      const wildcards = new Map<string, Params>();
      if (sub.wildcard) {
        // docs/decisions.md#relay-wildcards
        if (!options.fullStateTypeUrls.has(typeUrl) || options.perNodeTypeUrls.has(typeUrl)) {
          throw new InvalidRequestError(
            `the relay serves wildcard subscriptions of the types whose state-of-the-world responses list every resource (LDS, CDS); not of ${typeUrl}`,
            Code.Unimplemented,
          );
        }
        for (const wildcard of sub.wildcards) wildcards.set(paramsKey(wildcard.params), wildcard.params);
      }
      const slots = new Map<string, Subscribed>();
      const added: Subscribed[] = [];
      for (const [key, slot] of sub.slots) {
        const known = previous?.slots.get(key);
        if (known) slots.set(key, known);
        else {
          const subscribed = {
            name: slot.name,
            params: slot.params,
            paramsKey: paramsKey(slot.params),
            perNode: isPerNode(typeUrl, slot.name),
          };
          slots.set(key, subscribed);
          added.push(subscribed);
        }
      }
      const addedWildcards = [...wildcards.keys()].filter((key) => !previous?.wildcards.has(key));
      checkBudget(stream.node, sub, added, addedWildcards);
      if (!record) {
        record = { node: stream.node, types: new Map() };
        streams.set(stream.id, record);
      }
      const node = record.node;
      for (const key of addedWildcards) upstream.acquireWildcard(typeUrl, wildcards.get(key) as Params);
      for (const s of added) acquire(node, typeUrl, s);
      for (const [key, s] of previous?.slots ?? []) if (!slots.has(key)) release(node, typeUrl, s);
      for (const key of previous?.wildcards.keys() ?? []) {
        if (!wildcards.has(key)) upstream.releaseWildcard(typeUrl, key);
      }
      record.types.set(typeUrl, { key: sub.key, slots, wildcards });
    },
    closed(stream: SourceStream) {
      const record = streams.get(stream.id);
      if (!record) return;
      streams.delete(stream.id);
      for (const [typeUrl, type] of record.types) {
        for (const s of type.slots.values()) release(record.node, typeUrl, s);
        for (const key of type.wildcards.keys()) upstream.releaseWildcard(typeUrl, key);
      }
    },
    perNodeFrom(typeUrl, name) {
      if (perNode === undefined || isPerNode(typeUrl, name)) return;
      let names = learned.get(typeUrl);
      if (!names) {
        names = new Set();
        learned.set(typeUrl, names);
      }
      names.add(name);
      // Every downstream subscription of the name moves to its node's stream.
      for (const record of streams.values()) {
        for (const s of record.types.get(typeUrl)?.slots.values() ?? []) {
          if (s.name !== name || s.perNode) continue;
          s.perNode = true;
          perNode.acquire(record.node, typeUrl, name, s.params);
          upstream.release(typeUrl, name, s.paramsKey);
        }
      }
      // Every stream subscribed to the name is served from another table now.
      table.changed(typeUrl, name, NO_PARAMS);
    },
    ...(options.serveLrs ? { serveLrs: options.serveLrs } : {}),
  };
}
