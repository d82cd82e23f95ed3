// What one downstream stream is served from (docs/decisions.md#relay-per-node-resources): the relay's shared table,
// except for the names fetched per node (a type the relay always fetches so, such as DPDS, or a name the upstream
// marked do_not_cache), which come from the table of the stream's own node. The stream layer plans responses per
// (held state, subscription, version) and shares them between streams that agree on all three, so a type that mixes
// both tables shows a version of both, and no two nodes' views ever show one version for different contents.
import type { ServedGroup, ServedResources } from "@xdskit/control-plane/internal";
import type { Params } from "./params.js";
import type { RelayTable } from "./relay-table.js";

/** Which names of a type are fetched per node: all of them, some, or none (undefined). */
export type PerNodeNames = "all" | ReadonlySet<string> | undefined;

export interface NodeViewSource {
  readonly shared: RelayTable;
  /** The node's own table, once it has one. */
  ownTable(nodeKey: string): RelayTable | undefined;
  perNodeNames(typeUrl: string): PerNodeNames;
}

export function nodeView(source: NodeViewSource, nodeKey: string): ServedResources {
  const { shared } = source;
  return {
    entries(typeUrl) {
      const names = source.perNodeNames(typeUrl);
      if (names === undefined) return shared.entries(typeUrl);
      const own = source.ownTable(nodeKey)?.entries(typeUrl);
      if (names === "all") return own;
      return overlay(shared.entries(typeUrl), own, names);
    },
    typeVersion(typeUrl) {
      const names = source.perNodeNames(typeUrl);
      if (names === undefined) return shared.typeVersion(typeUrl);
      const own = source.ownTable(nodeKey)?.typeVersion(typeUrl) ?? "";
      if (names === "all") return own;
      // Not a number: changedSince answers "not known", and every subscribed name is compared.
      return `${shared.typeVersion(typeUrl)}.${own}`;
    },
    changedSince(typeUrl, version) {
      const names = source.perNodeNames(typeUrl);
      if (names === undefined) return shared.changedSince(typeUrl, version);
      if (names === "all") return source.ownTable(nodeKey)?.changedSince(typeUrl, version);
      return undefined;
    },
    wildcardAnswered(typeUrl: string, params: Params) {
      return shared.wildcardAnswered(typeUrl, params);
    },
  };
}

/** The shared groups of a type with the per-node names taken from the node's own. */
function overlay(
  shared: ReadonlyMap<string, ServedGroup> | undefined,
  own: ReadonlyMap<string, ServedGroup> | undefined,
  perNode: ReadonlySet<string>,
): ReadonlyMap<string, ServedGroup> {
  const entries = function* (): IterableIterator<[string, ServedGroup]> {
    for (const entry of shared ?? []) if (!perNode.has(entry[0])) yield entry;
    for (const entry of own ?? []) if (perNode.has(entry[0])) yield entry;
  };
  const view: ReadonlyMap<string, ServedGroup> = {
    get(name) {
      return perNode.has(name) ? own?.get(name) : shared?.get(name);
    },
    has(name) {
      return view.get(name) !== undefined;
    },
    get size() {
      let count = 0;
      for (const _ of entries()) count++;
      return count;
    },
    entries,
    [Symbol.iterator]: entries,
    keys: () => project(entries(), ([name]) => name),
    values: () => project(entries(), ([, group]) => group),
    forEach(callback, thisArg) {
      for (const [name, group] of entries()) callback.call(thisArg, group, name, view);
    },
  };
  return view;
}

function* project<T, U>(items: Iterable<T>, f: (item: T) => U): IterableIterator<U> {
  for (const item of items) yield f(item);
}
