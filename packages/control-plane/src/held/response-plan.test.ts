// Plans are worked out once per (held state, subscription, version) and lead every stream to one shared state.
import { expect, test } from "vitest";
import { EMPTY_HELD, type HeldState } from "./held-state.js";
import { LayeredMap } from "./layered-map.js";
import { createPlanCache, type PlanInit } from "./response-plan.js";

function counting(send: boolean, next: () => HeldState) {
  let calls = 0;
  const compute = (): PlanInit<string> => {
    calls++;
    return { send, content: () => "content", next };
  };
  return { compute, calls: () => calls };
}

const held = (name: string, version: number): HeldState => ({
  resources: LayeredMap.of([[name, version]]),
  errors: LayeredMap.empty(),
});

test("streams in the same place share one plan and reach one state", () => {
  const cache = createPlanCache();
  const a = counting(true, () => held("c1", 1));
  const first = cache.plan(EMPTY_HELD, "k", "1", a.compute);
  const second = cache.plan(EMPTY_HELD, "k", "1", a.compute);
  expect(second).toBe(first);
  expect(a.calls()).toBe(1);
  expect(second.next()).toBe(first.next());
});

test("another subscription, another version or another state is planned anew", () => {
  const cache = createPlanCache();
  const a = counting(true, () => held("c1", 1));
  cache.plan(EMPTY_HELD, "k", "1", a.compute);
  cache.plan(EMPTY_HELD, "other", "1", a.compute);
  cache.plan(EMPTY_HELD, "k", "2", a.compute);
  cache.plan(held("x", 1), "k", "2", a.compute);
  expect(a.calls()).toBe(4);
});

test("from the state a plan leads to, nothing is due at the same version, without planning again", () => {
  const cache = createPlanCache();
  const a = counting(true, () => held("c1", 1));
  const next = cache.plan(EMPTY_HELD, "k", "1", a.compute).next();
  const b = counting(true, () => held("never", 1));
  const settled = cache.plan(next, "k", "1", b.compute);
  expect(b.calls()).toBe(0);
  expect(settled.send).toBe(false);
  expect(settled.next()).toBe(next);
  // A later version is planned.
  cache.plan(next, "k", "2", b.compute);
  expect(b.calls()).toBe(1);
});

test("a later plan from a settled state is told the version it settled at", () => {
  const cache = createPlanCache();
  const next = cache
    .plan(EMPTY_HELD, "k", "1", () => ({ send: true, content: () => "c", next: () => held("c1", 1) }))
    .next();
  const seen: (string | undefined)[] = [];
  cache.plan(next, "k", "5", (settledAt) => {
    seen.push(settledAt);
    return { send: false, content: () => "c", next: () => next };
  });
  // Nothing was due at 5: settled there now, as a plan at 7 is told.
  cache.plan(next, "k", "7", (settledAt) => {
    seen.push(settledAt);
    return { send: false, content: () => "c", next: () => next };
  });
  cache.plan(EMPTY_HELD, "k", "7", (settledAt) => {
    seen.push(settledAt);
    return { send: true, content: () => "c", next: () => held("c1", 7) };
  });
  expect(seen).toEqual(["1", "5", undefined]);
});
