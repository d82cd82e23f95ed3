// The difference read from the names changed since a settled state must equal the full comparison: the fast path
// (what a push of a few changes costs) against the slow path (every subscribed and held name), over arbitrary
// states, subscriptions and changes.
import { create } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import { StatusSchema } from "@xdskit/protos/google/rpc/status_pb";
import fc from "fast-check";
import { expect, test } from "vitest";
import { diffHeld, type HeldDiff } from "./held-diff.js";
import { type HeldState, heldAfter, heldPruned, NOT_FOUND_SENT, UNKNOWN_VERSION } from "./held-state.js";
import { LayeredMap } from "./layered-map.js";
import type { Entry } from "./resource-set.js";
import { TypeSubscription } from "./subscription.js";

const NAMES = ["a", "b", "c", "d", "e", "f", "g", "h"];
const name = fc.constantFrom(...NAMES);
const any = create(AnySchema, {});
const status = create(StatusSchema, { code: 5 });

/** What the set holds under a name: a resource or an error at a version, or nothing. */
const slot = fc.oneof(
  fc.constant(undefined),
  fc.record({ kind: fc.constant("resource" as const), version: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ kind: fc.constant("error" as const), version: fc.integer({ min: 1, max: 4 }) }),
);
const entriesOf = (slots: readonly (typeof slot extends fc.Arbitrary<infer T> ? T : never)[]): Map<string, Entry> => {
  const map = new Map<string, Entry>();
  slots.forEach((s, i) => {
    const n = NAMES[i] as string;
    if (s?.kind === "resource") {
      map.set(n, {
        kind: "resource",
        typeUrl: "t",
        name: n,
        version: s.version,
        schema: undefined,
        any,
        wrap: undefined,
      });
    } else if (s?.kind === "error") {
      map.set(n, { kind: "error", typeUrl: "t", name: n, version: s.version, status });
    }
  });
  return map;
};
const slots = fc.array(slot, { minLength: NAMES.length, maxLength: NAMES.length });
const heldVersion = fc.oneof(fc.integer({ min: 1, max: 4 }), fc.constant(NOT_FOUND_SENT), fc.constant(UNKNOWN_VERSION));
const holds = fc
  .record({
    resources: fc.dictionary(name, heldVersion, { maxKeys: 6 }),
    errors: fc.dictionary(name, fc.integer({ min: 1, max: 4 }), { maxKeys: 3 }),
  })
  .map(
    ({ resources, errors }): HeldState => ({
      resources: LayeredMap.of(Object.entries(resources)),
      errors: LayeredMap.of(Object.entries(errors)),
    }),
  );
const subscription = fc.record({ wildcard: fc.boolean(), names: fc.uniqueArray(name, { maxLength: 5 }) });

function settle(held: HeldState, sub: TypeSubscription, entries: Map<string, Entry>): HeldState {
  const diff = diffHeld(held, sub, entries);
  return heldAfter(held, {
    replace: false,
    resources: diff.changed,
    errors: diff.errors,
    notFound: diff.removed.filter((n) => sub.names.has(n)),
    forgotten: diff.removed.filter((n) => !sub.names.has(n)),
  });
}

const asSets = (diff: HeldDiff) => ({
  changed: new Set(diff.changed.map((e) => `${e.name}@${e.version}`)),
  errors: new Set(diff.errors.map((e) => `${e.name}@${e.version}`)),
  removed: new Set(diff.removed),
});

test("the diff from the names changed since a settled state equals the full diff", () => {
  fc.assert(
    fc.property(
      holds,
      subscription,
      slots,
      slots,
      fc.uniqueArray(name, { maxLength: 3 }),
      fc.boolean(),
      (start, subInit, before, after, extra, reorder) => {
        const sub = new TypeSubscription("t");
        sub.replaceNames(subInit.names, subInit.wildcard);
        const entries0 = entriesOf(before);
        const settled = settle(heldPruned(start, sub), sub, entries0);
        // Settled: at the same version nothing is due.
        expect(asSets(diffHeld(settled, sub, entries0))).toEqual(asSets({ changed: [], errors: [], removed: [] }));
        // Some names change (and the log may list names that changed and changed back).
        const entries1 = entriesOf(after);
        const changedNames = NAMES.filter((_, i) => JSON.stringify(before[i]) !== JSON.stringify(after[i]));
        const logged = [...new Set([...changedNames, ...extra])];
        if (reorder) logged.reverse();
        expect(asSets(diffHeld(settled, sub, entries1, logged))).toEqual(asSets(diffHeld(settled, sub, entries1)));
      },
    ),
    { numRuns: 2000 },
  );
});
