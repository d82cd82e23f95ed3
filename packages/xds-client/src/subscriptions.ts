// The subscriptions of one name (of one type, in one authority), by their parameters key, as the cache keeps them:
// most names have one, which is its own map (a Map of one entry takes about 180 bytes, and even a wrapper object 32
// per name); a name subscribed with several parameter maps (TP2) gets a Map.

/**
 * A subscription as the map of its name's subscriptions when it is the only one: the entry class (ResourceState)
 * extends this, so a name with one subscription costs no object besides the entry.
 */
export abstract class SoleSubscription<S> implements ReadonlyMap<string, S> {
  abstract readonly parametersKey: string;
  private get self(): S {
    return this as unknown as S;
  }
  get size(): number {
    return 1;
  }
  get(key: string): S | undefined {
    return key === this.parametersKey ? this.self : undefined;
  }
  has(key: string): boolean {
    return key === this.parametersKey;
  }
  *entries(): MapIterator<[string, S]> {
    yield [this.parametersKey, this.self];
  }
  *keys(): MapIterator<string> {
    yield this.parametersKey;
  }
  *values(): MapIterator<S> {
    yield this.self;
  }
  [Symbol.iterator](): MapIterator<[string, S]> {
    return this.entries();
  }
  forEach(callback: (value: S, key: string, map: ReadonlyMap<string, S>) => void): void {
    callback(this.self, this.parametersKey, this);
  }
}

/** The subscription when a name has exactly one (no iterator needed), else undefined. */
export function onlyState<S>(subscriptions: ReadonlyMap<string, S>): S | undefined {
  return subscriptions instanceof SoleSubscription ? (subscriptions as unknown as S) : undefined;
}
