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
import { type ServedGroup, UNANSWERED } from "../resources/served.js";
import { VariantGroup, variantRef } from "../resources/variant-group.js";
import { type SlotInit, TypeSubscription, wildcardsOf } from "../subscriptions/subscription.js";
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
const subscription = fc.record({
  wildcard: fc.boolean(),
  // The wildcards' parameter maps (docs/decisions.md#wildcards-with-parameters): mostly one without, sometimes two.
  wildcardParams: fc.oneof(
    { weight: 3, arbitrary: fc.constant([PARAMS[0] as Readonly<Record<string, string>>]) },
    fc.uniqueArray(fc.constantFrom(...PARAMS), { minLength: 1, maxLength: 2 }),
  ),
  slots: fc.array(slotInit, { maxLength: 6 }),
});

function subscriptionOf(init: {
  wildcard: boolean;
  wildcardParams: readonly Readonly<Record<string, string>>[];
  slots: SlotInit[];
}): TypeSubscription {
  const sub = new TypeSubscription("t");
  const wildcards = init.wildcard ? wildcardsOf(init.wildcardParams.map((params) => ({ name: "*", params }))) : [];
  sub.replace(init.slots, wildcards);
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
      sub.replace([init], []);
      return [...sub.slots.keys()][0] as string;
    };
    return {
      resources: LayeredMap.of(resources.map(([init, value]) => [keyOf(init), value])),
      errors: LayeredMap.of(errors.map(([init, value]) => [keyOf(init), value])),
    };
  });

function settle(held: HeldState, sub: TypeSubscription, entries: ReadonlyMap<string, ServedGroup>): HeldState {
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
}, 120_000); // CPU-bound: 14 s in npm test with the machine busy

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
}, 120_000); // CPU-bound: 17 s in npm test with the machine busy

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

/**
 * The groups of `entries`, except that a subscription with a parameter map in `unanswered` (by its JSON, per name)
 * is not answered yet, as a relay waiting for its upstream says (resources/served.ts).
 */
function gated(entries: Map<string, VariantGroup>, unanswered: ReadonlySet<string>): Map<string, ServedGroup> {
  const out = new Map<string, ServedGroup>();
  for (const name of NAMES) {
    const group = entries.get(name);
    const gatedHere = PARAMS.some((p) => unanswered.has(`${name} ${JSON.stringify(p)}`));
    if (!group && !gatedHere) continue;
    out.set(name, {
      overlapping: group?.overlapping ?? false,
      choose: (params) =>
        unanswered.has(`${name} ${JSON.stringify(params ?? {})}`) ? UNANSWERED : group?.choose(params),
    });
  }
  return out;
}

const unansweredSet = fc
  .uniqueArray(fc.tuple(fc.constantFrom(...NAMES), fc.constantFrom(...PARAMS)), { maxLength: 4 })
  .map((pairs) => new Set(pairs.map(([name, params]) => `${name} ${JSON.stringify(params)}`)));

test("a subscription not answered yet gets nothing and loses nothing; the rest is as without it, by either path", () => {
  fc.assert(
    fc.property(
      situation,
      slots,
      unansweredSet,
      fc.boolean(),
      ({ start, subInit, state, changed }, after, unanswered, wild) => {
        const sub = subscriptionOf({ ...subInit, wildcard: subInit.wildcard && wild });
        const entries = entriesOf(state);
        const view = gated(entries, unanswered);
        const held = heldPruned(start, sub);
        const waitingKeys = new Set<string>();
        const waitingNames = new Set<string>();
        for (const name of NAMES) {
          for (const slot of sub.slotsOf(name)) {
            if (!unanswered.has(`${name} ${JSON.stringify(slot.params)}`)) continue;
            waitingKeys.add(slot.key);
            waitingNames.add(name);
          }
        }
        const diff = diffHeld(held, sub, view);
        // Nothing is said about a waiting subscription...
        for (const key of [...diff.changed.keys, ...diff.errors.keys, ...diff.notFound, ...diff.forgotten]) {
          expect(waitingKeys.has(key)).toBe(false);
        }
        // ...and what it holds is never removed.
        const keptByWaiting = new Set<string>();
        for (const key of waitingKeys) {
          for (const value of [held.resources.get(key), held.errors.get(key)]) {
            if (value !== undefined && typeof value !== "number")
              keptByWaiting.add(`${value.variant.name}{${value.variant.text}}`);
          }
        }
        for (const removal of diff.removed) {
          if (removal.variant) expect(keptByWaiting.has(`${removal.name}{${removal.variant.text}}`)).toBe(false);
        }
        // Names without a waiting subscription are diffed as if nothing waited.
        const keep = (d: ReturnType<typeof asSets>) => {
          // Slot keys with parameters start "\u0001<length>:<name>"; other labels start with the name.
          const nameOf = (text: string) => (text.startsWith("\u0001") ? text.slice(text.indexOf(":") + 1) : text);
          const named = (text: string) => !waitingNames.has(nameOf(text).charAt(0));
          return {
            changed: [...d.changed].filter(named).sort(),
            errors: [...d.errors].filter(named).sort(),
            removed: [...d.removed].filter(named).sort(),
            notFound: [...d.notFound].filter(named).sort(),
            forgotten: [...d.forgotten].filter(named).sort(),
          };
        };
        expect(keep(asSets(diff))).toEqual(keep(asSets(diffHeld(held, sub, entries))));
        // The fast paths agree with the slow ones under waiting subscriptions too: from a state settled under this
        // view, the names changed since give what comparing everything gives.
        const settled = settle(held, sub, view);
        const view1 = gated(entriesOf(after), unanswered);
        const logged = [
          ...new Set([...NAMES.filter((_, i) => JSON.stringify(state[i]) !== JSON.stringify(after[i])), ...changed]),
        ];
        expect(asSets(diffHeld(settled, sub, view1, logged))).toEqual(asSets(diffHeld(settled, sub, view1)));
        if (sub.wildcard) {
          expect(diffHeld(held, sub, view, undefined, true)).toEqual(diffHeld(held, sub, view, undefined, false));
        }
        // A full-state response waits while a subscription it would list is not answered.
        const full = fullState(held, sub, view);
        // (Every name with a waiting subscription has a group in the view, which a full state visits.)
        expect(full.waiting).toBe(waitingKeys.size > 0);
      },
    ),
    { numRuns: 1000 },
  );
}, 120_000); // CPU-bound: 13 s in npm test with the machine busy

test("a variant a waiting subscription holds is not removed when another subscription of the name moves off it", () => {
  // Subscriptions {env: prod} (not answered yet) and {env: prod, v: 1} of name a both hold the env=prod variant;
  // the second now gets env=prod && v=1. The client must keep env=prod for the first.
  const entries = entriesOf([
    { "env=prod": { kind: "resource", version: 1 }, "env=prod && v=1": { kind: "resource", version: 1 } },
  ]);
  const sub = subscriptionOf({
    wildcard: false,
    wildcardParams: [],
    slots: [
      { name: "a", params: { env: "prod" } },
      { name: "a", params: { env: "prod", v: "1" } },
    ],
  });
  const [waitingKey, movingKey] = [...sub.slots.keys()] as [string, string];
  const held = heldValueOf(entryOf("a", "env=prod", "resource", 1));
  const start: HeldState = {
    resources: LayeredMap.of([
      [waitingKey, held],
      [movingKey, held],
    ]),
    errors: EMPTY_HELD.errors,
  };
  const diff = diffHeld(start, sub, gated(entries, new Set([`a ${JSON.stringify({ env: "prod" })}`])));
  expect(asSets(diff)).toEqual({ ...NOTHING, changed: new Set([`${movingKey}->a{env=prod && v=1}@1`]) });
});
