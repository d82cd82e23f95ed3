// The does-not-exist timers of one ADS call (A57): one per subscription the call sent that still waits for its first
// answer. They belong to the call and die with it (docs/architecture.md#timers), so a failing call on one server
// never touches the timers of another server's call.
import type { Clock } from "./clock.js";
import type { ResourceState } from "./resource-state.js";

export interface WatchTimers {
  /** Starts a timer for each of `states` that waits for an answer and has none yet. */
  arm(states: readonly ResourceState[]): void;
  /** Stops the timers of `typeUrl` whose subscriptions no longer wait: a response answered them. */
  settle(typeUrl: string): void;
  /** Stops the timers of `typeUrl` whose subscriptions are not in `subscribed` (they were unsubscribed). */
  retain(typeUrl: string, subscribed: readonly ResourceState[]): void;
  /** Stops every timer. */
  stopAll(): void;
}

export function createWatchTimers(clock: Clock, ms: number, onExpire: (state: ResourceState) => void): WatchTimers {
  /** Per type: the subscriptions with a running timer, and its handle. */
  const byType = new Map<string, Map<ResourceState, unknown>>();

  return {
    arm(states) {
      for (const state of states) {
        let handles = byType.get(state.typeUrl);
        if (handles?.has(state) || !state.isWaiting()) continue;
        if (!handles) {
          handles = new Map();
          byType.set(state.typeUrl, handles);
        }
        const owner = handles;
        owner.set(
          state,
          clock.setTimeout(() => {
            owner.delete(state);
            onExpire(state);
          }, ms),
        );
      }
    },
    settle(typeUrl) {
      // Linear in the timers still running for the type, usually none once the first response arrived.
      const handles = byType.get(typeUrl);
      if (!handles) return;
      for (const [state, handle] of handles) {
        if (state.isWaiting()) continue;
        clock.clearTimeout(handle);
        handles.delete(state);
      }
    },
    retain(typeUrl, subscribed) {
      const handles = byType.get(typeUrl);
      if (!handles || handles.size === 0) return;
      const keep = new Set(subscribed);
      for (const [state, handle] of handles) {
        if (keep.has(state)) continue;
        clock.clearTimeout(handle);
        handles.delete(state);
      }
    },
    stopAll() {
      for (const handles of byType.values()) for (const handle of handles.values()) clock.clearTimeout(handle);
      byType.clear();
    },
  };
}
