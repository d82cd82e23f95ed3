// The wake index narrows the streams a change visits: it must never leave out a stream the change concerns
// (change-scope.ts decides), whatever the streams subscribed to before, and must drop a stream once forgotten.
import fc from "fast-check";
import { expect, test } from "vitest";
import { CONSTRAINT_TEXTS, PARAMETER_MAPS } from "../../test/held-sets.js";
import { readConstraints } from "../resources/variant-group.js";
import { type SlotInit, TypeSubscription } from "../streams/subscription.js";
import { type ChangedVariants, concerns, WHOLE_NAME } from "./change-scope.js";
import { WakeIndex } from "./wake-index.js";

const TYPES = ["t1", "t2"];
const NAMES = ["a", "b", "c"];
const subscription = fc.record({
  typeUrl: fc.constantFrom(...TYPES),
  wildcard: fc.boolean(),
  slots: fc.array(fc.record({ name: fc.constantFrom(...NAMES), params: fc.constantFrom(...PARAMETER_MAPS) }), {
    maxLength: 4,
  }),
});
/** A stream: the subscriptions it makes one after another (each replacing the last of its type), and whether it closes. */
const stream = fc.record({ history: fc.array(subscription, { minLength: 1, maxLength: 4 }), closes: fc.boolean() });
const change = fc.dictionary(
  fc.constantFrom(...TYPES),
  fc.dictionary(
    fc.constantFrom(...NAMES),
    fc.option(fc.uniqueArray(fc.constantFrom(...CONSTRAINT_TEXTS), { minLength: 1, maxLength: 3 }), { freq: 6 }),
    { minKeys: 1, maxKeys: 3 },
  ),
  { minKeys: 1, maxKeys: 2 },
);

function changedOf(init: Record<string, Record<string, string[] | null>>): ChangedVariants {
  return new Map(
    Object.entries(init).map(([typeUrl, names]) => [
      typeUrl,
      new Map(
        Object.entries(names).map(([name, texts]) => [
          name,
          texts === null ? WHOLE_NAME : texts.map((text) => readConstraints(text, "test")),
        ]),
      ),
    ]),
  );
}

test("the index's candidates hold every open stream a change concerns", () => {
  let narrowed = 0;
  fc.assert(
    fc.property(fc.array(stream, { minLength: 1, maxLength: 6 }), change, (streams, changeInit) => {
      const index = new WakeIndex<number>();
      // What each stream subscribes to now, per type.
      const current = streams.map(() => new Map<string, TypeSubscription>());
      streams.forEach(({ history }, id) => {
        for (const init of history) {
          const sub = current[id]?.get(init.typeUrl) ?? new TypeSubscription(init.typeUrl);
          current[id]?.set(init.typeUrl, sub);
          sub.replace(init.slots as SlotInit[], init.wildcard);
          index.update(id, sub);
        }
      });
      streams.forEach(({ closes }, id) => {
        if (closes) index.forget(id);
      });
      const changed = changedOf(changeInit);
      const candidates = index.candidates(changed);
      expect(candidates).toBeDefined();
      streams.forEach(({ closes }, id) => {
        if (closes) {
          expect(candidates?.has(id)).toBe(false);
          return;
        }
        const concerned = [...(current[id]?.values() ?? [])].some((sub) => concerns(sub, changed));
        if (concerned) expect(candidates?.has(id)).toBe(true);
        else if (!candidates?.has(id)) narrowed++;
      });
    }),
    { numRuns: 1000 },
  );
  // The index did leave streams out.
  expect(narrowed).toBeGreaterThan(100);
});
