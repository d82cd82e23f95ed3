// The difference read from the names changed since a settled state must equal the full comparison: the fast path
// (what a push of a few changes costs) against the slow path (every subscribed and held name), over arbitrary
// states, subscriptions (by name, by locator with parameters, wildcard), variant sets (overlapping or not, resources
// and errors) and changes. Sized for a loaded CI machine: a minute at most.
import { create } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import { fromText } from "@xdskit/constraint-matcher";
import { StatusSchema } from "@xdskit/protos/google/rpc/status_pb";
import fc from "fast-check";
import { expect, test } from "vitest";
import { asSets, NOTHING } from "../../test/held-sets.js";
import type { Entry, VariantRef } from "../resources/entry.js";
import { VariantGroup, variantRef } from "../resources/variant-group.js";
import { type SlotInit, TypeSubscription } from "../streams/subscription.js";
import { diffHeld, distinctEntries, fullState } from "./held-diff.js";
import {
  type BySlot,
  EMPTY_HELD,
  type HeldState,
  type HeldValue,
  heldAfter,
  heldPruned,
  heldValueOf,
  NOT_FOUND_SENT,
  UNKNOWN_VERSION,
} from "./held-state.js";
import { LayeredMap } from "./layered-map.js";

const NAMES = ["a", "b", "c", "d", "e"];
const CONSTRAINTS = ["true", "env=prod", "env=test", "env=prod && v=1", "!exists(env)", "exists(v)"];
const PARAMS: Readonly<Record<string, string>>[] = [
  {},
  { env: "prod" },
  { env: "test" },
  { env: "prod", v: "1" },
  { v: "2" },
];
const any = create(AnySchema, {});
const status = create(StatusSchema, { code: 5 });

// One VariantRef per (name, constraints) and one entry per (variant, kind, version), as a resource set keeps them:
// an unchanged variant is the same object before and after.
const refs = new Map<string, VariantRef | undefined>();
const refOf = (name: string, text: string): VariantRef | undefined => {
  const key = `${name} ${text}`;
  if (!refs.has(key)) refs.set(key, variantRef(name, fromText(text)));
  return refs.get(key);
};
const entryCache = new Map<string, Entry>();
const entryOf = (name: string, text: string, kind: "resource" | "error", version: number): Entry => {
  const key = `${name} ${text} ${kind} ${version}`;
  let entry = entryCache.get(key);
  if (!entry) {
    const base = { typeUrl: "t", name, version, variant: refOf(name, text), allowOverlap: true };
    entry =
      kind === "resource"
        ? { ...base, kind, schema: undefined, any, wrap: undefined, doNotCache: false }
        : { ...base, kind, status };
    entryCache.set(key, entry);
  }
  return entry;
};

/** What the set holds under a name: some variants, each a resource or an error at a version. */
const variantSlot = fc.record({
  kind: fc.constantFrom("resource" as const, "error" as const),
  version: fc.integer({ min: 1, max: 3 }),
});
const nameSlot = fc.dictionary(fc.constantFrom(...CONSTRAINTS), variantSlot, { maxKeys: 3 });
type NameSlot = Readonly<Record<string, { kind: "resource" | "error"; version: number }>>;
const slots = fc.array(nameSlot, { minLength: NAMES.length, maxLength: NAMES.length });

function entriesOf(state: readonly NameSlot[]): Map<string, VariantGroup> {
  const map = new Map<string, VariantGroup>();
  state.forEach((variants, i) => {
    const name = NAMES[i] as string;
    const texts = Object.keys(variants);
    if (texts.length === 0) return;
    const group = new VariantGroup(name);
    const items = texts.map((text) => {
      const v = variants[text] as { kind: "resource" | "error"; version: number };
      return entryOf(name, text, v.kind, v.version);
    });
    group.settleOverlaps(group.checkOverlaps("t", items, true, true));
    for (const entry of items) group.set(entry);
    map.set(name, group);
  });
  return map;
}

const slotInit = fc.record({
  name: fc.constantFrom(...NAMES),
  params: fc.constantFrom(...PARAMS),
});
const subscription = fc.record({ wildcard: fc.boolean(), slots: fc.array(slotInit, { maxLength: 6 }) });

function subscriptionOf(init: { wildcard: boolean; slots: SlotInit[] }): TypeSubscription {
  const sub = new TypeSubscription("t");
  sub.replace(init.slots, init.wildcard);
  return sub;
}

/** Anything a client might hold for a subscription: any slot key, any value (other entries' too). */
const heldValue: fc.Arbitrary<HeldValue> = fc.oneof(
  fc.integer({ min: 1, max: 3 }),
  fc.constant(NOT_FOUND_SENT),
  fc.constant(UNKNOWN_VERSION),
  fc
    .tuple(fc.constantFrom(...NAMES), fc.constantFrom(...CONSTRAINTS), variantSlot)
    .map(([name, text, v]) => heldValueOf(entryOf(name, text, v.kind, v.version))),
);
const holds = fc
  .record({
    resources: fc.array(fc.tuple(slotInit, heldValue), { maxLength: 6 }),
    errors: fc.array(fc.tuple(slotInit, heldValue), { maxLength: 3 }),
  })
  .map(({ resources, errors }): HeldState => {
    // Slot keys as the subscription makes them.
    const keyOf = (init: SlotInit) => {
      const sub = new TypeSubscription("t");
      sub.replace([init], false);
      return [...sub.slots.keys()][0] as string;
    };
    return {
      resources: LayeredMap.of(resources.map(([init, value]) => [keyOf(init), value])),
      errors: LayeredMap.of(errors.map(([init, value]) => [keyOf(init), value])),
    };
  });

function settle(held: HeldState, sub: TypeSubscription, entries: Map<string, VariantGroup>): HeldState {
  const diff = diffHeld(held, sub, entries);
  return heldAfter(held, {
    replace: false,
    resources: diff.changed,
    errors: diff.errors,
    notFound: diff.notFound,
    forgotten: diff.forgotten,
  });
}

test("the diff from the names changed since a settled state equals the full diff", () => {
  fc.assert(
    fc.property(
      holds,
      subscription,
      slots,
      slots,
      fc.uniqueArray(fc.constantFrom(...NAMES), { maxLength: 3 }),
      fc.boolean(),
      (start, subInit, before, after, extra, reorder) => {
        const sub = subscriptionOf(subInit);
        const entries0 = entriesOf(before);
        const settled = settle(heldPruned(start, sub), sub, entries0);
        // Settled: at the same version nothing is due.
        expect(asSets(diffHeld(settled, sub, entries0))).toEqual(NOTHING);
        // Some names change (and the log may list names that changed and changed back).
        const entries1 = entriesOf(after);
        const changedNames = NAMES.filter((_, i) => JSON.stringify(before[i]) !== JSON.stringify(after[i]));
        const logged = [...new Set([...changedNames, ...extra])];
        if (reorder) logged.reverse();
        expect(asSets(diffHeld(settled, sub, entries1, logged))).toEqual(asSets(diffHeld(settled, sub, entries1)));
      },
    ),
    { numRuns: 1000 },
  );
}, 60_000);

/** What a client holds, how it subscribes, the type's variants, and some names logged as changed. */
const situation = fc.record({
  start: holds,
  subInit: subscription,
  state: slots,
  changed: fc.uniqueArray(fc.constantFrom(...NAMES), { maxLength: 5 }),
});

test("the short path for names only the wildcard covers gives exactly what the general one gives", () => {
  fc.assert(
    fc.property(situation, ({ start, subInit, state, changed }) => {
      const sub = subscriptionOf({ ...subInit, wildcard: true });
      const entries = entriesOf(state);
      for (const held of [start, heldPruned(start, sub)]) {
        expect(diffHeld(held, sub, entries, undefined, true)).toEqual(diffHeld(held, sub, entries, undefined, false));
        expect(diffHeld(held, sub, entries, changed, true)).toEqual(diffHeld(held, sub, entries, changed, false));
      }
    }),
    { numRuns: 2000 },
  );
}, 60_000);

test("every list a response is made from gives a name's subscriptions together, and distinctEntries dedupes it as a Set would", () => {
  const check = (list: BySlot<Entry>): void => {
    expect(list.entries.length).toBe(list.keys.length);
    const names = list.entries.map((entry) => entry.name);
    // Together: once a name's run ends, the name does not come back.
    const ended = new Set<string>();
    names.forEach((name, i) => {
      expect(ended.has(name)).toBe(false);
      if (names[i + 1] !== name) ended.add(name);
    });
    expect(distinctEntries(list)).toEqual([...new Set(list.entries)]);
  };
  fc.assert(
    fc.property(situation, ({ start, subInit, state, changed }) => {
      const sub = subscriptionOf(subInit);
      const entries = entriesOf(state);
      const held = heldPruned(start, sub);
      for (const diff of [diffHeld(held, sub, entries), diffHeld(held, sub, entries, changed)]) {
        check(diff.changed);
        check(diff.errors);
      }
      const full = fullState(held, sub, entries);
      check(full.resources);
      check(full.errors);
    }),
    { numRuns: 1000 },
  );
}, 60_000);

test("each subscription gets the variant the matcher selects, and a variant is removed only when no subscription keeps it", () => {
  fc.assert(
    fc.property(subscription, slots, slots, (subInit, before, after) => {
      const sub = subscriptionOf(subInit);
      const entries0 = entriesOf(before);
      const entries1 = entriesOf(after);
      const settled = settle(EMPTY_HELD, sub, entries0);
      const diff = diffHeld(settled, sub, entries1);
      const next = settle(settled, sub, entries1);
      for (const [key, slot] of sub.slots) {
        const choice = entries1.get(slot.name)?.choose(slot.params);
        if (choice?.kind === "resource") expect(next.resources.get(key)).toBe(heldValueOf(choice));
        else if (choice?.kind === "error") expect(next.errors.get(key)).toBe(heldValueOf(choice));
        else expect(next.resources.get(key)).toBe(NOT_FOUND_SENT);
      }
      // A removal never names a variant some subscription of the stream holds afterwards.
      const keptVariants = new Set<string>();
      for (const value of [...next.resources.values(), ...next.errors.values()]) {
        if (typeof value !== "number") keptVariants.add(`${value.variant.name}{${value.variant.text}}`);
      }
      for (const removal of diff.removed) {
        if (removal.variant) expect(keptVariants.has(`${removal.name}{${removal.variant.text}}`)).toBe(false);
      }
    }),
    { numRuns: 500 },
  );
}, 60_000);
