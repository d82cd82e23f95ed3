import type { Expr } from "@xdskit/constraint-matcher";
import { type ChangedVariants, ChangeLog, type ServedResources } from "@xdskit/control-plane/internal";
import { type Params, paramsConstraints } from "./params.js";
import { RelayGroup } from "./relay-group.js";

interface TypeTable {
  readonly groups: Map<string, RelayGroup>;
  readonly log: ChangeLog;
  version: number;
  /** A stream read `version` since it was opened: the next change needs a new one. */
  observed: boolean;
}

/**
 * What the relay serves its downstream streams from: per type, the names subscribed to and their answers
 * (relay-group.ts), a version that moves whenever an answer changes, and a log of the names that changed, which is
 * what the control plane's stream layer needs to serve a source other than its own sets (served.ts).
 *
 * Versions: every plan the stream layer makes reads the type's version first, and plans are reused for as long as
 * the version stays; so a change after the version was read opens a new one, and changes no stream has seen share
 * one (a response of many resources from the upstream is one version downstream). Streams are woken once per
 * microtask, with what changed.
 */
export class RelayTable implements ServedResources {
  readonly #types = new Map<string, TypeTable>();
  #version = 0;
  #notify: ((changed: ChangedVariants) => void) | undefined;
  #pending: Map<string, Map<string, Expr[]>> | undefined;

  /** Where changes go: the server wakes the streams they may concern. */
  attach(notify: (changed: ChangedVariants) => void): void {
    this.#notify = notify;
  }

  entries(typeUrl: string): ReadonlyMap<string, RelayGroup> | undefined {
    return this.#types.get(typeUrl)?.groups;
  }

  typeVersion(typeUrl: string): string {
    const table = this.#types.get(typeUrl);
    if (!table) return "";
    table.observed = true;
    return String(table.version);
  }

  changedSince(typeUrl: string, version: number): readonly string[] | undefined {
    return this.#types.get(typeUrl)?.log.since(version);
  }

  /** The group of a name, created when first subscribed to. */
  group(typeUrl: string, name: string): RelayGroup {
    const table = this.#type(typeUrl);
    let group = table.groups.get(name);
    if (!group) {
      group = new RelayGroup(typeUrl, name);
      table.groups.set(name, group);
    }
    return group;
  }

  /** Forgets a group nobody subscribes to any more. */
  dropIfEmpty(group: RelayGroup): void {
    const table = this.#types.get(group.typeUrl);
    if (group.size === 0 && table?.groups.get(group.name) === group) table.groups.delete(group.name);
  }

  /** Every group, for statistics. */
  *groups(): IterableIterator<RelayGroup> {
    for (const table of this.#types.values()) yield* table.groups.values();
  }

  /** The answer for `params` of a name changed: a new version if a stream saw the current one, and a wake-up. */
  changed(typeUrl: string, name: string, params: Params): void {
    const table = this.#type(typeUrl);
    if (table.observed) {
      table.version = ++this.#version;
      table.log.open(table.version);
      table.observed = false;
    }
    table.log.log(name, table.groups.size);
    if (this.#pending === undefined) {
      this.#pending = new Map();
      queueMicrotask(() => this.#flush());
    }
    let names = this.#pending.get(typeUrl);
    if (!names) {
      names = new Map();
      this.#pending.set(typeUrl, names);
    }
    const list = names.get(name);
    const constraints = paramsConstraints(params);
    if (list) list.push(constraints);
    else names.set(name, [constraints]);
  }

  #type(typeUrl: string): TypeTable {
    let table = this.#types.get(typeUrl);
    if (!table) {
      table = { groups: new Map(), log: new ChangeLog(), version: ++this.#version, observed: false };
      table.log.open(table.version);
      this.#types.set(typeUrl, table);
    }
    return table;
  }

  #flush(): void {
    const changed = this.#pending;
    this.#pending = undefined;
    if (changed) this.#notify?.(changed);
  }
}
