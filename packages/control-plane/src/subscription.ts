import type { Entry, ErrorEntry, ResourceEntry } from "./resource-set.js";

/**
 * What one stream subscribes to for one type. Shared by the SotW and delta streams. A resource's identity is its
 * name for now; TP2 variants will add constraints to the names here and to the key.
 */
export class TypeSubscription {
  readonly typeUrl: string;
  #wildcard = false;
  readonly #names = new Set<string>();
  #key: string | undefined;

  constructor(typeUrl: string) {
    this.typeUrl = typeUrl;
  }

  /** Subscribed to every resource of the type (`*`, or the legacy empty first request for LDS/CDS). */
  get wildcard(): boolean {
    return this.#wildcard;
  }

  /** Subscribed by name, in the order the client named them. */
  get names(): ReadonlySet<string> {
    return this.#names;
  }

  /**
   * Identifies the type and subscription: equal keys, equal subscriptions (names in the same order). Computed once
   * per change, so streams that subscribe alike share what is built for them (see response-plan.ts).
   */
  get key(): string {
    if (this.#key === undefined) {
      let key = `${this.typeUrl.length}:${this.typeUrl}${this.#wildcard ? "*" : "-"}`;
      for (const name of this.#names) key += `${name.length}:${name}`;
      this.#key = key;
    }
    return this.#key;
  }

  isSubscribed(name: string): boolean {
    return this.#wildcard || this.#names.has(name);
  }

  /**
   * Replaces the explicit names (`*` among them is left out: pass `wildcard`). Returns whether anything changed: a
   * SotW ACK repeats the subscription, and an unchanged one keeps its key.
   */
  replaceNames(names: readonly string[], wildcard: boolean): boolean {
    const explicit = names.includes("*") ? names.filter((name) => name !== "*") : names;
    if (wildcard === this.#wildcard && this.#sameNames(explicit)) return false;
    this.#names.clear();
    for (const name of explicit) this.#names.add(name);
    this.#wildcard = wildcard;
    this.#key = undefined;
    return true;
  }

  /** Adds names (`*` turns the wildcard on). Returns whether anything changed. */
  subscribe(names: Iterable<string>): boolean {
    const before = this.#names.size;
    const wildcard = this.#wildcard;
    for (const name of names) {
      if (name === "*") this.#wildcard = true;
      else this.#names.add(name);
    }
    return this.#changed(before !== this.#names.size || wildcard !== this.#wildcard);
  }

  /** Removes names (`*` turns the wildcard off). Returns whether anything changed. */
  unsubscribe(names: Iterable<string>): boolean {
    const before = this.#names.size;
    const wildcard = this.#wildcard;
    for (const name of names) {
      if (name === "*") this.#wildcard = false;
      else this.#names.delete(name);
    }
    return this.#changed(before !== this.#names.size || wildcard !== this.#wildcard);
  }

  #changed(changed: boolean): boolean {
    if (changed) this.#key = undefined;
    return changed;
  }

  /** The same names in the same order (a list with duplicates never matches: it is replaced, which collapses them). */
  #sameNames(names: readonly string[]): boolean {
    if (names.length !== this.#names.size) return false;
    let i = 0;
    for (const name of this.#names) if (names[i++] !== name) return false;
    return true;
  }

  /** Subscribed resources that exist, in the set's order (wildcard) or the client's (by name). */
  subscribedResources(entries: ReadonlyMap<string, Entry> | undefined): ResourceEntry[] {
    const out: ResourceEntry[] = [];
    if (!entries) return out;
    if (this.#wildcard) {
      for (const entry of entries.values()) if (entry.kind === "resource") out.push(entry);
    } else {
      for (const name of this.#names) {
        const entry = entries.get(name);
        if (entry?.kind === "resource") out.push(entry);
      }
    }
    return out;
  }

  /**
   * Resource errors the client does not hold yet. TP3 does not cover wildcard subscriptions: errors go only to names
   * subscribed by name.
   */
  pendingErrors(entries: ReadonlyMap<string, Entry> | undefined, held: ReadonlyMap<string, number>): ErrorEntry[] {
    const out: ErrorEntry[] = [];
    if (!entries) return out;
    for (const name of this.#names) {
      const entry = entries.get(name);
      if (entry?.kind === "error" && held.get(name) !== entry.version) out.push(entry);
    }
    return out;
  }
}
