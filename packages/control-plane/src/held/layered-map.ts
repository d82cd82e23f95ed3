const GONE: unique symbol = Symbol("gone");
/** The top of a map without changes of its own (never written to). */
const NO_CHANGES: ReadonlyMap<string, never> = new Map<string, never>();

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
    return new LayeredMap(base, NO_CHANGES, base.size);
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

  /**
   * A copy with each of `names` set to the value at its index in `values`, and `remove` removed (a name in both ends
   * up removed); this map when nothing changes. The changes go in a top layer while they are few; once they outgrow
   * an eighth of the base, in a flat copy.
   */
  with(names: readonly string[], values: readonly V[], remove: readonly string[] = []): LayeredMap<V> {
    const limit = (this.#base.size + 64) / 8;
    let top: Map<string, V | typeof GONE> | undefined;
    let flat: Map<string, V> | undefined;
    let size = this.size;
    const current = (name: string): V | typeof GONE => {
      if (flat) return flat.has(name) ? (flat.get(name) as V) : GONE;
      const value = (top ?? this.#top).get(name);
      if (value !== undefined) return value;
      return this.#base.has(name) ? (this.#base.get(name) as V) : GONE;
    };
    const put = (name: string, value: V | typeof GONE): void => {
      if (flat) {
        if (value === GONE) flat.delete(name);
        else flat.set(name, value);
        return;
      }
      top ??= new Map(this.#top);
      top.set(name, value);
      if (top.size > limit) flat = flatten(this.#base, top);
    };
    // Indexed loops, no destructuring: this runs once per response plan, mostly before the optimizing compiler gets
    // to it, and unoptimized iteration allocates per element.
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      const value = values[i] as V;
      const before = current(name);
      if (before === value) continue;
      if (before === GONE) size++;
      put(name, value);
    }
    for (let i = 0; i < remove.length; i++) {
      const name = remove[i] as string;
      if (current(name) === GONE) continue;
      size--;
      put(name, GONE);
    }
    if (flat) return new LayeredMap(flat, NO_CHANGES, size);
    return top ? new LayeredMap(this.#base, top, size) : this;
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

/** `base` with `top` applied, in iteration order: the base's names in place, then names new in the top. */
function flatten<V>(base: ReadonlyMap<string, V>, top: ReadonlyMap<string, V | typeof GONE>): Map<string, V> {
  const flat = new Map(base);
  for (const [name, value] of top) {
    if (value === GONE) flat.delete(name);
    else flat.set(name, value);
  }
  return flat;
}

const EMPTY: LayeredMap<unknown> = LayeredMap.of([]);
