import type { Expr } from "@xdskit/constraint-matcher";
import { type ChangedVariants, ChangeLog, type ServedResources } from "@xdskit/control-plane/internal";
import { NO_PARAMS, type Params, paramsConstraints, paramsKey } from "./params.js";
import { RelayGroup } from "./relay-group.js";

interface TypeTable {
  readonly groups: Map<string, RelayGroup>;
  readonly log: ChangeLog;
  version: number;
  /** A stream read `version` since it was opened: the next change needs a new one. */
  observed: boolean;
  /** The upstream wildcards of the type, by parameters key: whether each has answered. */
  readonly wildcards: Map<string, boolean>;
  /** Whether the wildcard of a parameters key has answered (given to every group of the type). */
  readonly wildcardAnswered: (paramsKey: string) => boolean;
}

/** Where versions come from: one counter for every table of a relay, so no two tables ever show one version. */
export interface VersionCounter {
  value: number;
}

/** The name a change that concerns every wildcard subscriber of a type is logged under (no resource has it). */
export const WILDCARD_CHANGE = "";

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
  readonly #counter: VersionCounter;
  #notify: ((changed: ChangedVariants) => void) | undefined;
  #pending: Map<string, Map<string, Expr[]>> | undefined;

  constructor(counter: VersionCounter = { value: 0 }) {
    this.#counter = counter;
  }

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

  wildcardAnswered(typeUrl: string, params: Params): boolean {
    return this.#types.get(typeUrl)?.wildcardAnswered(paramsKey(params)) ?? false;
  }

  /**
   * An upstream wildcard of the type opened (answered false), answered (true) or closed (undefined); an answer wakes
   * the type's wildcard subscribers, which may have waited for it (served.ts).
   */
  setWildcard(typeUrl: string, key: string, answered: boolean | undefined): void {
    const table = this.#type(typeUrl);
    if (answered === undefined) table.wildcards.delete(key);
    else if (table.wildcards.get(key) !== answered) {
      table.wildcards.set(key, answered);
      if (answered) this.changed(typeUrl, WILDCARD_CHANGE, NO_PARAMS);
    }
  }

  /** The group of a name, created when first subscribed to. */
  group(typeUrl: string, name: string): RelayGroup {
    const table = this.#type(typeUrl);
    let group = table.groups.get(name);
    if (!group) {
      group = new RelayGroup(typeUrl, name, table.wildcardAnswered);
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
      table.version = ++this.#counter.value;
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
      const wildcards = new Map<string, boolean>();
      table = {
        groups: new Map(),
        log: new ChangeLog(),
        version: ++this.#counter.value,
        observed: false,
        wildcards,
        wildcardAnswered: (key) => wildcards.get(key) === true,
      };
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
