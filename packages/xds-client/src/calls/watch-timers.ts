// The does-not-exist timers of one ADS call (A57): one per subscription the call sent that still waits for its first
// answer. They belong to the call and die with it (docs/architecture.md#timers), so a failing call on one server
// never touches the timers of another server's call. The subscriptions armed together (those of one request) share
// one clock timer: they started at the same time, so they expire at the same time, and a response answering
// 10,000 subscriptions stops one timer, not 10,000.
import type { Clock } from "../shared/clock.js";
import type { ResourceState } from "../state/resource-state.js";

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

/** The clock timer of the subscriptions armed at one time, and how many of them still have it. */
interface Batch {
  readonly handle: unknown;
  running: number;
}

export function createWatchTimers(clock: Clock, ms: number, onExpire: (state: ResourceState) => void): WatchTimers {
  /** Per type: the subscriptions with a running timer, and the batch whose clock timer it is. */
  const byType = new Map<string, Map<ResourceState, Batch>>();
  /**
   * Per list armed before (a request's subscriptions: the cache hands the same array while they are unchanged), the
   * entries of it that were still REQUESTED then. No entry goes back to REQUESTED once answered, so only those can
   * wait for an answer now: an ACK of 10,000 answered subscriptions looks at none of them.
   */
  const unanswered = new WeakMap<readonly ResourceState[], readonly ResourceState[]>();

  /** Stops the timer of `state` (its batch's clock timer with the last one). */
  function stop(timers: Map<ResourceState, Batch>, state: ResourceState, batch: Batch): void {
    timers.delete(state);
    batch.running -= 1;
    if (batch.running === 0) clock.clearTimeout(batch.handle);
  }

  return {
    arm(states) {
      let batch: Batch | undefined;
      const armed: ResourceState[] = [];
      const requested: ResourceState[] = [];
      for (const state of unanswered.get(states) ?? states) {
        if (state.state !== "requested") continue;
        requested.push(state);
        if (!state.isWaiting() || byType.get(state.typeUrl)?.has(state)) continue;
        armed.push(state);
      }
      unanswered.set(states, requested);
      if (armed.length === 0) return;
      const expire = () => {
        // Each subscription of the batch whose timer still runs (in the order they were armed).
        for (const state of armed) {
          const timers = byType.get(state.typeUrl);
          if (timers?.get(state) !== batch) continue;
          timers!.delete(state);
          onExpire(state);
        }
      };
      batch = { handle: clock.setTimeout(expire, ms), running: armed.length };
      for (const state of armed) {
        let timers = byType.get(state.typeUrl);
        if (!timers) {
          timers = new Map();
          byType.set(state.typeUrl, timers);
        }
        timers.set(state, batch);
      }
    },
    settle(typeUrl) {
      // Linear in the timers still running for the type, usually none once the first response arrived.
      const timers = byType.get(typeUrl);
      if (!timers || timers.size === 0) return;
      let answered = 0;
      timers.forEach((_batch, state) => {
        if (!state.isWaiting()) answered += 1;
      });
      if (answered < timers.size) {
        if (answered > 0) {
          timers.forEach((batch, state) => {
            if (!state.isWaiting()) stop(timers, state, batch);
          });
        }
        return;
      }
      // Every timer stops (the first response to a request of 10,000 names): the map is emptied at once.
      timers.forEach((batch) => {
        batch.running -= 1;
        if (batch.running === 0) clock.clearTimeout(batch.handle);
      });
      timers.clear();
    },
    retain(typeUrl, subscribed) {
      const timers = byType.get(typeUrl);
      if (!timers || timers.size === 0) return;
      const keep = new Set(subscribed);
      for (const [state, batch] of timers) if (!keep.has(state)) stop(timers, state, batch);
    },
    stopAll() {
      const batches = new Set<Batch>();
      for (const timers of byType.values()) for (const batch of timers.values()) batches.add(batch);
      for (const batch of batches) clock.clearTimeout(batch.handle);
      byType.clear();
    },
  };
}
