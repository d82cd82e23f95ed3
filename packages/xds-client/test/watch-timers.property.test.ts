// The does-not-exist timers' skip (calls/watch-timers.ts): a list armed before is looked at again only where its
// entries were still REQUESTED. Property: through any history of watchers coming and going, entries answered, lists
// armed (the same array again, or a copy), settled and retained, and time passing, timers fed the same arrays expire
// exactly the entries, at exactly the times, that timers fed a fresh copy at every call (which never skip) expire.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createWatchTimers } from "../src/calls/watch-timers.js";
import { createCallbackQueue } from "../src/state/callback-queue.js";
import { type CacheState, ResourceState, type WatcherEntry } from "../src/state/resource-state.js";
import { createManualClock } from "./support/virtual-clock.js";

const TYPE = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
const TIMER_MS = 100;
const ENTRIES = 6;

type Step =
  | { readonly op: "watch" | "unwatch"; readonly entry: number }
  | { readonly op: "answer"; readonly entry: number; readonly state: Exclude<CacheState, "requested"> }
  | { readonly op: "arm"; readonly list: number; readonly copy: boolean }
  | { readonly op: "settle" }
  | { readonly op: "retain"; readonly list: number }
  | { readonly op: "advance"; readonly ms: number };

const entry = fc.nat({ max: ENTRIES - 1 });
const list = fc.nat({ max: 2 });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constantFrom("watch" as const, "unwatch" as const), entry }),
  fc.record({
    op: fc.constant("answer" as const),
    entry,
    state: fc.constantFrom("acked" as const, "nacked" as const, "does_not_exist" as const, "timeout" as const),
  }),
  fc.record({ op: fc.constant("arm" as const), list, copy: fc.boolean() }),
  fc.record({ op: fc.constant("settle" as const) }),
  fc.record({ op: fc.constant("retain" as const), list }),
  fc.record({ op: fc.constant("advance" as const), ms: fc.constantFrom(10, 60, 100, 250) }),
);

/** Runs `steps` on fresh entries; `fresh` hands the timers a new copy of each list at every call. */
function run(steps: readonly Step[], fresh: boolean): string[] {
  const queue = createCallbackQueue((error) => {
    throw error;
  });
  const entries = Array.from({ length: ENTRIES }, (_, i) => new ResourceState("", TYPE, `r${i}`, {}, "", queue));
  const watchers: WatcherEntry[] = entries.map(() => ({
    watcher: { onResourceChanged() {}, onAmbientError() {} },
    active: true,
  }));
  // Three lists, as a cache hands them: the same array while the subscriptions are unchanged.
  const lists: readonly (readonly ResourceState[])[] = [entries, entries.slice(0, 3), entries.slice(2)];
  const clock = createManualClock(0);
  const expired: string[] = [];
  const timers = createWatchTimers(clock, TIMER_MS, (state) => expired.push(`${state.name}@${clock.now()}`));
  const given = (i: number, copy: boolean) => (fresh || copy ? [...lists[i]!] : lists[i]!);
  for (const s of steps) {
    if (s.op === "watch") entries[s.entry]!.addWatcher(watchers[s.entry]!);
    else if (s.op === "unwatch") entries[s.entry]!.removeWatcher(watchers[s.entry]!);
    else if (s.op === "answer") entries[s.entry]!.state = s.state;
    else if (s.op === "arm") timers.arm(given(s.list, s.copy));
    else if (s.op === "settle") timers.settle(TYPE);
    else if (s.op === "retain") timers.retain(TYPE, given(s.list, false));
    else if (s.op === "advance") clock.advanceNow(s.ms);
  }
  clock.advanceNow(10 * TIMER_MS);
  return expired;
}

describe("watch timers: the skip of answered entries", () => {
  it("expires what arming every list afresh expires, at the same times", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 5, maxLength: 40, size: "max" }), (steps) => {
        expect(run(steps, false)).toEqual(run(steps, true));
      }),
      { numRuns: 500 },
    );
  });

  it("arms an entry that gets its first watcher after its list was armed", () => {
    // The case the skip must not lose: REQUESTED but not waiting (no watcher) when first armed.
    const steps: Step[] = [
      { op: "arm", list: 0, copy: false },
      { op: "watch", entry: 1 },
      { op: "arm", list: 0, copy: false },
      { op: "advance", ms: 250 },
    ];
    expect(run(steps, false)).toEqual(["r1@100"]);
  });
});
