// The does-not-exist timers of one ADS call (A57): one per subscription the call sent that still waits for its first
// answer. They belong to the call and die with it (docs/architecture.md#timers), so a failing call on one server
// never touches the timers of another server's call.
import type { Clock } from "./clock.js";
import type { ResourceState } from "./resource-state.js";

export interface WatchTimers {
  /** Starts a timer for each of `states` that waits for an answer and has none yet. */
  arm(states: readonly ResourceState[]): void;
  /** Stops the timers of `names` (of `typeUrl`) whose subscriptions are no longer waiting: a response answered them. */
  settle(typeUrl: string, names: Iterable<string>): void;
  /** Stops the timers of `typeUrl` whose subscriptions are not in `subscribed` (they were unsubscribed). */
  retain(typeUrl: string, subscribed: readonly ResourceState[]): void;
  /** Stops every timer. */
  stopAll(): void;
}

export function createWatchTimers(clock: Clock, ms: number, onExpire: (state: ResourceState) => void): WatchTimers {
  const handles = new Map<ResourceState, unknown>();
  /** `typeUrl\0name` → the states with a running timer. */
  const byName = new Map<string, Set<ResourceState>>();
  const keyOf = (typeUrl: string, name: string) => `${typeUrl}\u0000${name}`;

  function stop(state: ResourceState): void {
    const handle = handles.get(state);
    if (handle === undefined) return;
    clock.clearTimeout(handle);
    handles.delete(state);
    const key = keyOf(state.typeUrl, state.name);
    const set = byName.get(key);
    set?.delete(state);
    if (set?.size === 0) byName.delete(key);
  }

  return {
    arm(states) {
      for (const state of states) {
        if (handles.has(state) || !state.isWaiting()) continue;
        const handle = clock.setTimeout(() => {
          stop(state);
          onExpire(state);
        }, ms);
        handles.set(state, handle);
        const key = keyOf(state.typeUrl, state.name);
        let set = byName.get(key);
        if (!set) {
          set = new Set();
          byName.set(key, set);
        }
        set.add(state);
      }
    },
    settle(typeUrl, names) {
      if (handles.size === 0) return;
      for (const name of names) {
        const set = byName.get(keyOf(typeUrl, name));
        if (!set) continue;
        for (const state of [...set]) if (!state.isWaiting()) stop(state);
      }
    },
    retain(typeUrl, subscribed) {
      if (handles.size === 0) return;
      const keep = new Set(subscribed);
      for (const state of [...handles.keys()]) if (state.typeUrl === typeUrl && !keep.has(state)) stop(state);
    },
    stopAll() {
      for (const handle of handles.values()) clock.clearTimeout(handle);
      handles.clear();
      byName.clear();
    },
  };
}
