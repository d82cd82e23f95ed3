const GONE: unique symbol = Symbol("gone");

/**
 * An immutable map from names that shares a flat base with the maps it was made from and keeps its own changes in a
 * small top layer: a copy with a few changes costs the changes, not the map's size. When the top grows past an
 * eighth of the base, the copy is flattened. Iteration follows the base's order (a changed name keeps its place),
 * then names new in the top.
 */
export class LayeredMap<V> implements ReadonlyMap<string, V> {
  readonly size: number;
  readonly #base: ReadonlyMap<string, V>;
  readonly #top: ReadonlyMap<string, V | typeof GONE>;

  private constructor(base: ReadonlyMap<string, V>, top: ReadonlyMap<string, V | typeof GONE>, size: number) {
    this.#base = base;
    this.#top = top;
    this.size = size;
  }

  static empty<V>(): LayeredMap<V> {
    return EMPTY as LayeredMap<V>;
  }

  static of<V>(entries: Iterable<readonly [string, V]>): LayeredMap<V> {
    const base = new Map(entries);
    return new LayeredMap(base, new Map(), base.size);
  }

  get(name: string): V | undefined {
    const top = this.#top.get(name);
    if (top !== undefined) return top === GONE ? undefined : top;
    return this.#base.get(name);
  }

  has(name: string): boolean {
    const top = this.#top.get(name);
    if (top !== undefined) return top !== GONE;
    return this.#base.has(name);
  }

  /** A copy with `set` set and `remove` removed (a name in both ends up removed); this map when nothing changes. */
  with(set: Iterable<readonly [string, V]>, remove: Iterable<string> = []): LayeredMap<V> {
    const top = new Map(this.#top);
    const current = (name: string): V | typeof GONE => {
      const value = top.get(name);
      if (value !== undefined) return value;
      return this.#base.has(name) ? (this.#base.get(name) as V) : GONE;
    };
    let size = this.size;
    let changed = false;
    for (const [name, value] of set) {
      const before = current(name);
      if (before === value) continue;
      if (before === GONE) size++;
      top.set(name, value);
      changed = true;
    }
    for (const name of remove) {
      if (current(name) === GONE) continue;
      size--;
      top.set(name, GONE);
      changed = true;
    }
    if (!changed) return this;
    const next = new LayeredMap(this.#base, top, size);
    return top.size * 8 > this.#base.size + 64 ? LayeredMap.of(next) : next;
  }

  *entries(): MapIterator<[string, V]> {
    for (const [name, value] of this.#base) {
      const top = this.#top.get(name);
      if (top === undefined) yield [name, value];
      else if (top !== GONE) yield [name, top];
    }
    for (const [name, value] of this.#top) if (value !== GONE && !this.#base.has(name)) yield [name, value];
  }

  *keys(): MapIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }

  forEach(callback: (value: V, name: string, map: ReadonlyMap<string, V>) => void): void {
    for (const [name, value] of this.entries()) callback(value, name, this);
  }
}

const EMPTY: LayeredMap<unknown> = LayeredMap.of([]);
