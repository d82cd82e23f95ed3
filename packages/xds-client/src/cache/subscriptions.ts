// The subscriptions of one name (of one type, in one authority), by their parameters key, as the cache keeps them:
// most names have one, which is held without a Map (a Map of one entry takes about 180 bytes, its subscription
// about 250 in all); a name subscribed with several parameter maps (TP2) gets a Map.
import type { ResourceState } from "../state/resource-state.js";

/** A name's only subscription, as the map of its subscriptions. */
export class OneSubscription implements ReadonlyMap<string, ResourceState> {
  constructor(readonly state: ResourceState) {}
  get size(): number {
    return 1;
  }
  get(key: string): ResourceState | undefined {
    return key === this.state.parametersKey ? this.state : undefined;
  }
  has(key: string): boolean {
    return key === this.state.parametersKey;
  }
  *entries(): MapIterator<[string, ResourceState]> {
    yield [this.state.parametersKey, this.state];
  }
  *keys(): MapIterator<string> {
    yield this.state.parametersKey;
  }
  *values(): MapIterator<ResourceState> {
    yield this.state;
  }
  [Symbol.iterator](): MapIterator<[string, ResourceState]> {
    return this.entries();
  }
  forEach(callback: (value: ResourceState, key: string, map: ReadonlyMap<string, ResourceState>) => void): void {
    callback(this.state, this.state.parametersKey, this);
  }
}

export type NameSubscriptions = OneSubscription | Map<string, ResourceState>;

/** The subscription when a name has exactly one (no iterator needed), else undefined. */
export function onlyState(subscriptions: ReadonlyMap<string, ResourceState>): ResourceState | undefined {
  return subscriptions instanceof OneSubscription ? subscriptions.state : undefined;
}
