// heldAfter against a model on plain Maps: whatever the client held and whatever a response carried (each
// subscription in at most one of its lists), the state afterwards reads the same, with `replace` and without.
import fc from "fast-check";
import { expect, test } from "vitest";
import type { ErrorEntry, ResourceEntry } from "../resources/entry.js";
import {
  type HeldState,
  type HeldValue,
  heldAfter,
  heldValueOf,
  NOT_FOUND_SENT,
  type SentBySlot,
} from "./held-state.js";
import { LayeredMap } from "./layered-map.js";

const KEYS = Array.from({ length: 30 }, (_, i) => `k${i}`);
const version = fc.integer({ min: 1, max: 4 });
const resource = (name: string, v: number) =>
  ({ kind: "resource", name, version: v, variant: undefined }) as ResourceEntry;
const error = (name: string, v: number) => ({ kind: "error", name, version: v, variant: undefined }) as ErrorEntry;
const EMPTY = { keys: [], entries: [] };

/** A held state, built by layering edits so that bases and tops both occur. */
const held: fc.Arbitrary<HeldState> = fc
  .array(
    fc.tuple(
      fc.uniqueArray(fc.constantFrom(...KEYS), { maxLength: 30 }),
      fc.array(version, { minLength: 30, maxLength: 30 }),
    ),
    { minLength: 1, maxLength: 3 },
  )
  .map((layers) =>
    layers.reduce<HeldState>(
      (state, [keys, versions]) => {
        const resourceKeys = keys.filter((_, i) => i % 3 !== 0);
        const errorKeys = keys.filter((_, i) => i % 3 === 0);
        return {
          resources: state.resources.with(
            resourceKeys,
            resourceKeys.map((_, i) => (versions[i] === 4 ? NOT_FOUND_SENT : (versions[i] as number))),
            keys.filter((_, i) => i % 5 === 0),
          ),
          errors: state.errors.with(
            errorKeys,
            errorKeys.map((_, i) => versions[i] as number),
          ),
        };
      },
      { resources: LayeredMap.empty<HeldValue>(), errors: LayeredMap.empty<HeldValue>() },
    ),
  );

/** A response: distinct keys split between resources, errors, not found and forgotten. */
const sent: fc.Arbitrary<SentBySlot> = fc
  .tuple(
    fc.boolean(),
    fc.shuffledSubarray(KEYS),
    fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), version), { minLength: 30, maxLength: 30 }),
  )
  .map(([replace, keys, picks]) => {
    const resources = { keys: [] as string[], entries: [] as ResourceEntry[] };
    const errors = { keys: [] as string[], entries: [] as ErrorEntry[] };
    const notFound: string[] = [];
    const forgotten: string[] = [];
    keys.forEach((key, i) => {
      const [list, v] = picks[i] as [number, number];
      if (list === 0) {
        resources.keys.push(key);
        resources.entries.push(resource(key, v));
      } else if (list === 1) {
        errors.keys.push(key);
        errors.entries.push(error(key, v));
      } else if (list === 2) notFound.push(key);
      else forgotten.push(key);
    });
    return { replace, resources, errors, notFound, forgotten };
  });

function model(
  before: HeldState,
  response: SentBySlot,
): { resources: Map<string, HeldValue>; errors: Map<string, HeldValue> } {
  const resources = response.replace ? new Map<string, HeldValue>() : new Map(before.resources);
  const errors = new Map(before.errors);
  response.resources.keys.forEach((key, i) => {
    resources.set(key, heldValueOf(response.resources.entries[i] as ResourceEntry));
    errors.delete(key);
  });
  for (const key of response.notFound ?? []) {
    resources.set(key, NOT_FOUND_SENT);
    errors.delete(key);
  }
  response.errors.keys.forEach((key, i) => {
    errors.set(key, heldValueOf(response.errors.entries[i] as ErrorEntry));
    resources.delete(key);
  });
  for (const key of response.forgotten ?? []) {
    resources.delete(key);
    errors.delete(key);
  }
  return { resources, errors };
}

test("heldAfter reads as the same response applied to plain Maps", () => {
  fc.assert(
    fc.property(held, sent, (before, response) => {
      const after = heldAfter(before, response);
      const expected = model(before, response);
      expect(new Map(after.resources)).toEqual(expected.resources);
      expect(after.resources.size).toBe(expected.resources.size);
      expect(new Map(after.errors)).toEqual(expected.errors);
      expect(after.errors.size).toBe(expected.errors.size);
      for (const key of KEYS) expect(after.resources.get(key)).toBe(expected.resources.get(key));
    }),
    { numRuns: 500 },
  );
}, 60_000); // CPU-bound property: about 1 s alone, 4 s with the machine busy

test("a full-state re-push with one resource changed keeps the rest of what the client held", () => {
  const keys = Array.from({ length: 1000 }, (_, i) => `c${i}`);
  const full = (version: (i: number) => number, from = 0) => ({
    replace: true,
    resources: { keys: keys.slice(from), entries: keys.slice(from).map((k, i) => resource(k, version(i + from))) },
    errors: EMPTY,
  });
  const first = heldAfter(
    { resources: LayeredMap.empty(), errors: LayeredMap.empty() },
    full(() => 1),
  );
  const second = heldAfter(
    first,
    full((i) => (i === 7 ? 2 : 1)),
  );
  expect(second.resources.get("c7")).toBe(2);
  expect(second.resources.size).toBe(1000);
  // The order is the first response's.
  expect([...second.resources.keys()]).toEqual(keys);
  const third = heldAfter(
    second,
    full(() => 1, 1),
  );
  expect(third.resources.has("c0")).toBe(false);
  expect(third.resources.size).toBe(999);
});
