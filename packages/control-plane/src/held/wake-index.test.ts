// The wake index narrows the streams a change visits: it must never leave out a stream the change concerns
// (change-scope.ts decides), whatever the streams subscribed to before, and must drop a stream once forgotten.
import type { Expr } from "@xdskit/constraint-matcher";
import fc from "fast-check";
import { expect, test } from "vitest";
import { CONSTRAINT_TEXTS, PARAMETER_MAPS } from "../../test/held-sets.js";
import { readConstraints } from "../resources/variant-group.js";
import { type ChangedVariants, concerns, WHOLE_NAME } from "../subscriptions/change-scope.js";
import { type SlotInit, TypeSubscription, wildcardsOf } from "../subscriptions/subscription.js";
import { WakeIndex } from "./wake-index.js";

const TYPES = ["t1", "t2"];
const NAMES = ["a", "b", "c"];
/** The parameter maps of a stream's wildcards (docs/decisions.md#wildcards-with-parameters): none, mostly one. */
const wildcardMaps = fc.oneof(
  { weight: 3, arbitrary: fc.constant([]) },
  { weight: 3, arbitrary: fc.constant([{}]) },
  fc.uniqueArray(fc.constantFrom(...PARAMETER_MAPS), { minLength: 1, maxLength: 2 }),
);
const wildcardInits = (maps: readonly Readonly<Record<string, string>>[]): SlotInit[] =>
  maps.map((params) => ({ name: "*", params }));
const subscription = fc.record({
  typeUrl: fc.constantFrom(...TYPES),
  wildcard: wildcardMaps,
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
          sub.replace(init.slots as SlotInit[], wildcardsOf(wildcardInits(init.wildcard)));
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

/** A step of one stream: a delta request (subscribe, unsubscribe), a SotW one (replace), each maybe indexed at once. */
const step = fc.record({
  typeUrl: fc.constantFrom(...TYPES),
  op: fc.constantFrom("subscribe", "unsubscribe", "replace"),
  wildcard: wildcardMaps,
  slots: fc.array(fc.record({ name: fc.constantFrom(...NAMES), params: fc.constantFrom(...PARAMETER_MAPS) }), {
    maxLength: 3,
  }),
  indexNow: fc.boolean(),
});

test("an index kept up to date change by change gives exactly what one made from the final subscriptions gives", () => {
  // The oracle reads the final subscriptions directly: a variant requiring key=value concerns the streams with a
  // subscription of its name, or a wildcard, carrying that parameter; any other, the streams naming it or subscribing
  // by wildcard.
  const probes: { typeUrl: string; name: string; variant: Expr | undefined }[] = [];
  for (const typeUrl of TYPES) {
    for (const name of NAMES) {
      probes.push({ typeUrl, name, variant: undefined });
      for (const text of CONSTRAINT_TEXTS) probes.push({ typeUrl, name, variant: readConstraints(text, "test") });
    }
  }
  fc.assert(
    fc.property(
      fc.array(fc.record({ steps: fc.array(step, { maxLength: 8 }), closes: fc.boolean() }), { maxLength: 5 }),
      (streams) => {
        const index = new WakeIndex<number>();
        const subs = streams.map(() => new Map<string, TypeSubscription>());
        streams.forEach(({ steps }, id) => {
          for (const { typeUrl, op, wildcard, slots, indexNow } of steps) {
            const sub = subs[id]?.get(typeUrl) ?? new TypeSubscription(typeUrl);
            subs[id]?.set(typeUrl, sub);
            const inits = slots as SlotInit[];
            if (op === "replace") sub.replace(inits, wildcardsOf(wildcardInits(wildcard)));
            else if (op === "subscribe") sub.subscribe([...inits, ...wildcardInits(wildcard)]);
            else sub.unsubscribe([...inits, ...wildcardInits(wildcard)]);
            if (indexNow) index.update(id, sub);
          }
        });
        streams.forEach(({ closes }, id) => {
          if (closes) index.forget(id);
          else for (const sub of subs[id]?.values() ?? []) index.update(id, sub);
        });
        for (const { typeUrl, name, variant } of probes) {
          // Without a variant: the whole name changed. The first key=value a variant requires (alone, or a term of
          // a top-level conjunction), as the index reads it.
          const changed: ChangedVariants = new Map([[typeUrl, new Map([[name, variant ? [variant] : WHOLE_NAME]])]]);
          const terms: readonly Expr[] = variant?.kind === "and" ? variant.children : variant ? [variant] : [];
          const required = terms.find((term) => term.kind === "value");
          const expected = streams.flatMap(({ closes }, id) => {
            const sub = subs[id]?.get(typeUrl);
            if (closes || !sub) return [];
            const named = sub.explicitSlotsOf(name);
            const concerned = required
              ? [...named, ...sub.wildcards].some((slot) => slot.params[required.key] === required.value)
              : named.length > 0 || sub.wildcard;
            return concerned ? [id] : [];
          });
          expect([...(index.candidates(changed) ?? [])].sort()).toEqual(expected);
        }
      },
    ),
    { numRuns: 500 },
  );
});
