// The names a SotW request lists (every subscribed plain name once, every subscription with parameters as a locator)
// are worked out again only when the subscriptions changed; an ACK in a steady state reuses the lists of the request
// before. Property: over any sequence of subscription lists (entries coming, going, reordered, the same list again),
// the cached lists equal the lists worked out afresh, and the same entries in the same order give the same lists.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createNamesCache, requestedNames } from "../src/calls/sotw-call.js";
import type { CallbackQueue } from "../src/state/callback-queue.js";
import { parametersKey, ResourceState } from "../src/state/resource-state.js";

const queue = {} as CallbackQueue;
const TYPE = "type.googleapis.com/envoy.config.cluster.v3.Cluster";

/** Entries as the cache holds them: plain names, and names with parameters (the same name may have both). */
const pool: ResourceState[] = [];
for (const name of ["a", "b", "c", "xdstp://auth/envoy.config.cluster.v3.Cluster/d"]) {
  for (const parameters of [{}, { env: "prod" }, { env: "test", zone: "z" }]) {
    pool.push(new ResourceState("", TYPE, name, Object.freeze(parameters), parametersKey(parameters), queue));
  }
}
// Two entries of one plain name (from two authorities' lists): listed once.
pool.push(new ResourceState("other", TYPE, "a", Object.freeze({}), "", queue));

const listArb = fc.oneof(fc.shuffledSubarray(pool), fc.constant("same" as const), fc.constant("copy" as const));

describe("the names of a SotW request", () => {
  it("are the same cached as worked out afresh, and reused while the subscriptions are the same", () => {
    fc.assert(
      fc.property(fc.array(listArb, { minLength: 1, maxLength: 12 }), (steps) => {
        const cached = createNamesCache();
        let states: readonly ResourceState[] = [];
        let before: ReturnType<typeof requestedNames> | undefined;
        for (const step of steps) {
          // "same": the very list again; "copy": the same entries in a new array, as the cache hands them out.
          if (step === "copy") states = [...states];
          else if (step !== "same") states = step;
          const lists = cached(states);
          expect(lists).toEqual(requestedNames(states));
          if (before !== undefined && step !== "same" && step !== "copy") {
            // A changed list is not answered with the lists of another one.
            const changed = JSON.stringify(requestedNames(states)) !== JSON.stringify(before);
            if (changed) expect(lists).not.toBe(before);
          }
          if (step === "same" || step === "copy") {
            if (before !== undefined) expect(lists).toBe(before);
          }
          before = lists;
        }
      }),
    );
  });

  it("list each plain name once, in order, and each subscription with parameters", () => {
    const [a, aProd, , b] = [pool[0]!, pool[1]!, pool[2]!, pool[3]!];
    const otherA = pool[pool.length - 1]!;
    expect(requestedNames([a, aProd, b, otherA])).toEqual({
      names: ["a", "b"],
      locators: [{ name: "a", dynamicParameters: { env: "prod" } }],
    });
  });
});
