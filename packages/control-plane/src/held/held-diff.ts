import type { Entry, ErrorEntry, ResourceEntry, VariantRef } from "../resources/entry.js";
import { type Choice, type ServedGroup, UNANSWERED } from "../resources/served.js";
import type { TypeSubscription, Wildcard } from "../subscriptions/subscription.js";
import { type BySlot, type HeldState, type HeldValue, heldValueOf, NOT_FOUND_SENT } from "./held-state.js";

/** A variant a delta client is told is gone: by name when unconstrained (`removed_resources`), else with its constraints. */
export interface Removal {
  readonly name: string;
  readonly variant: VariantRef | undefined;
}

interface BySlotBuilder<E extends Entry> extends BySlot<E> {
  readonly keys: string[];
  readonly entries: E[];
}

const bySlot = <E extends Entry>(): BySlotBuilder<E> => ({ keys: [], entries: [] });

function add<E extends Entry>(list: BySlotBuilder<E>, key: string, entry: E): void {
  list.keys.push(key);
  list.entries.push(entry);
}

/** How what a client holds of a type differs from the type's resources, subscription by subscription. */
export interface HeldDiff {
  /** Subscriptions (slot keys) and the resource each gets: one it does not hold at that version. */
  readonly changed: BySlot<ResourceEntry>;
  /** Explicit subscriptions and the error each gets instead (TP3 does not cover wildcards). */
  readonly errors: BySlot<ErrorEntry>;
  /**
   * For delta: variants the client holds that none of its subscriptions gets any more (replaced by another variant,
   * gone, or matching none), and names that do not exist for an explicit subscription that was never told so.
   */
  readonly removed: readonly Removal[];
  /** Explicit subscriptions left without a resource: remembered as told it does not exist. */
  readonly notFound: readonly string[];
  /** Wildcard subscriptions whose resource is gone: forgotten. */
  readonly forgotten: readonly string[];
}

type Grouped = ReadonlyMap<string, ServedGroup> | undefined;

/** Identity of a variant in the removal bookkeeping: the unconstrained one has none of its own. */
const PLAIN = Symbol("unconstrained");
type Identity = VariantRef | typeof PLAIN;

function identityOf(value: HeldValue | undefined): Identity | undefined {
  if (value === undefined || value === NOT_FOUND_SENT) return undefined;
  return typeof value === "number" ? PLAIN : value.variant;
}

/**
 * The difference between `holds` and `entries`, name by name. With `changedNames` (every name changed since a
 * version `holds` was settled at: it then held exactly what that version had for this subscription), only those
 * names are looked at; without, every subscribed and held name is. A name that did not change contributes nothing,
 * so both give the same sets (held-diff.test.ts checks it). A name's subscriptions are taken together: which
 * variants the client keeps depends on all of them.
 */
export function diffHeld(
  holds: HeldState,
  sub: TypeSubscription,
  entries: Grouped,
  changedNames?: readonly string[],
  /** Internal, for the test that compares the two: names only the wildcard covers take the short path. */
  coveredFastPath = true,
): HeldDiff {
  const diff: MutableDiff = {
    changed: bySlot(),
    errors: bySlot(),
    removed: [],
    notFound: [],
    forgotten: [],
  };
  // Most names of a wildcard subscription are ones the client did not name: one subscription, no parameters.
  const sole = coveredFastPath ? sub.soleWildcard : undefined;
  // forEach, not a loop of this function's own: a first response walks every name here once, and a loop that hot
  // would get this function compiled again at its next call, a change's one name, on the compiler's thread beside
  // the change. The callback's code, made hot by that walk, is what a change runs.
  (changedNames ?? candidateNames(holds, sub, entries)).forEach((name) => {
    if (sole !== undefined && !sub.hasName(name)) diffCovered(diff, holds, sub, sole, name, entries?.get(name));
    else diffName(diff, holds, sub, name, entries);
  });
  return diff;
}

interface MutableDiff extends HeldDiff {
  readonly changed: BySlotBuilder<ResourceEntry>;
  readonly errors: BySlotBuilder<ErrorEntry>;
  readonly removed: Removal[];
  readonly notFound: string[];
  readonly forgotten: string[];
}

/**
 * `diffName` for a name only the stream's one wildcard covers, without its slot and lists: the one subscription gets
 * the choice of the wildcard's parameters (none, mostly), never an error (TP3 errors go to explicit subscriptions), and what it held
 * is removed unless it is what it gets now (held-diff.test.ts checks it against `diffName`).
 */
function diffCovered(
  diff: MutableDiff,
  holds: HeldState,
  sub: TypeSubscription,
  wildcard: Wildcard,
  name: string,
  group: ServedGroup | undefined,
): void {
  const key = sub.coveredKey(name, wildcard);
  const choice = group?.choose(wildcard.params);
  if (choice === UNANSWERED || choice?.kind === "error") return;
  const heldResource = holds.resources.get(key);
  let lost: Identity | undefined;
  if (choice !== undefined) {
    if (heldResource === heldValueOf(choice)) return;
    add(diff.changed, key, choice);
    lost = identityOf(heldResource ?? holds.errors.get(key));
    if (lost === (choice.variant ?? PLAIN)) return;
  } else {
    lost = identityOf(heldResource) ?? identityOf(holds.errors.get(key));
    if (lost === undefined) return;
    diff.forgotten.push(key);
  }
  if (lost !== undefined) diff.removed.push(lost === PLAIN ? { name, variant: undefined } : { name, variant: lost });
}

/**
 * Every name a full comparison looks at: the type's names if wildcard, then the names subscribed and the names held
 * that are not among them. An array, not a generator, and a set only for the names beyond the type's: a first
 * response of many resources walks them once.
 */
function candidateNames(holds: HeldState, sub: TypeSubscription, entries: Grouped): readonly string[] {
  if (!sub.wildcard) return [...sub.names()];
  const names = entries ? [...entries.keys()] : [];
  let more: Set<string> | undefined;
  const consider = (name: string): void => {
    if (entries?.has(name) || more?.has(name)) return;
    more ??= new Set();
    more.add(name);
    names.push(name);
  };
  for (const name of sub.names()) consider(name);
  if (holds.resources.size > 0) {
    for (const key of holds.resources.keys()) {
      const covered = sub.coveredSlot(key);
      if (covered !== undefined) consider(covered.name);
    }
  }
  return names;
}

function diffName(diff: MutableDiff, holds: HeldState, sub: TypeSubscription, name: string, entries: Grouped): void {
  const slots = sub.slotsOf(name);
  if (slots.length === 0) return;
  const group = entries?.get(name);
  const choices: Choice[] = slots.map((slot) => group?.choose(slot.params));
  const lost: Identity[] = [];
  const changedFrom = diff.changed.keys.length;
  slots.forEach((slot, i) => {
    const choice = choices[i];
    // Not answered yet: nothing is said about it, and what it holds it keeps (served.ts).
    if (choice === UNANSWERED) return;
    const heldResource = holds.resources.get(slot.key);
    const heldError = holds.errors.get(slot.key);
    if (choice?.kind === "resource") {
      if (heldResource === heldValueOf(choice)) return;
      add(diff.changed, slot.key, choice);
      lose(lost, identityOf(heldResource ?? heldError));
    } else if (choice?.kind === "error") {
      if (!slot.explicit || heldError === heldValueOf(choice)) return;
      add(diff.errors, slot.key, choice);
      lose(lost, identityOf(heldResource));
    } else {
      const held = identityOf(heldResource) ?? identityOf(heldError);
      if (held !== undefined) lose(lost, held);
      else if (heldResource === undefined && slot.explicit) lose(lost, PLAIN);
      else return;
      (slot.explicit ? diff.notFound : diff.forgotten).push(slot.key);
    }
  });
  if (lost.length > 0) {
    // What the subscriptions hold afterwards: a variant one of them keeps is never removed.
    const kept = new Set<Identity>();
    slots.forEach((slot, i) => {
      const choice = choices[i];
      const after =
        choice === UNANSWERED
          ? identityOf(holds.resources.get(slot.key) ?? holds.errors.get(slot.key))
          : choice?.kind === "error" && !slot.explicit
            ? identityOf(holds.resources.get(slot.key))
            : choice && (choice.variant ?? PLAIN);
      if (after !== undefined) kept.add(after);
    });
    for (const identity of lost) {
      if (kept.has(identity)) continue;
      kept.add(identity);
      diff.removed.push(identity === PLAIN ? { name, variant: undefined } : { name, variant: identity });
    }
  }
  // Overlapping variants: a client picks among what a response carries, so it must carry what every subscription
  // of the name holds (variant-group.ts).
  if (group?.overlapping && diff.changed.keys.length > changedFrom) {
    const sent = new Set(diff.changed.keys.slice(changedFrom));
    slots.forEach((slot, i) => {
      const choice = choices[i];
      if (choice !== UNANSWERED && choice?.kind === "resource" && !sent.has(slot.key)) {
        add(diff.changed, slot.key, choice);
      }
    });
  }
}

function lose(lost: Identity[], identity: Identity | undefined): void {
  if (identity !== undefined && !lost.includes(identity)) lost.push(identity);
}

/** What a SotW full-state response lists: every subscription's resource, and the errors the client does not hold. */
export interface FullState {
  readonly resources: BySlot<ResourceEntry>;
  readonly errors: BySlot<ErrorEntry>;
  /** Whether the client holds anything else than `resources`, or lacks an error. */
  readonly differs: boolean;
  /** A subscription is not answered yet (served.ts): the response cannot list the whole state, and waits. */
  readonly waiting: boolean;
}

export function fullState(holds: HeldState, sub: TypeSubscription, entries: Grouped): FullState {
  const sole = sub.soleWildcard;
  const resources = bySlot<ResourceEntry>();
  const errors = bySlot<ErrorEntry>();
  let differs = false;
  let waiting = false;
  const list = (key: string, explicit: boolean, choice: Choice): void => {
    if (choice === UNANSWERED) waiting = true;
    else if (choice?.kind === "resource") {
      add(resources, key, choice);
      if (!differs && holds.resources.get(key) !== heldValueOf(choice)) differs = true;
    } else if (choice?.kind === "error" && explicit && holds.errors.get(key) !== heldValueOf(choice)) {
      add(errors, key, choice);
    }
  };
  const visit = (name: string, group: ServedGroup): void => {
    // The common case, a name the wildcard covers and the client did not name, without allocating its slot.
    if (sole !== undefined && !sub.hasName(name)) list(sub.coveredKey(name, sole), false, group.choose(sole.params));
    else for (const slot of sub.slotsOf(name)) list(slot.key, slot.explicit, group.choose(slot.params));
  };
  if (sub.wildcard) {
    // forEach rather than for-of: this runs on few calls over many names, mostly unoptimized, where each step of a
    // Map iterator with destructuring allocates.
    entries?.forEach((group, name) => {
      visit(name, group);
    });
  } else {
    for (const name of sub.names()) {
      const group = entries?.get(name);
      if (group) visit(name, group);
    }
  }
  return {
    resources,
    errors,
    differs: differs || errors.keys.length > 0 || resources.keys.length !== holds.resources.size,
    waiting,
  };
}

/**
 * The distinct entries of a per-subscription list, in order: what goes on the wire. Lists from `diffHeld` and
 * `fullState` give a name's subscriptions one after another (held-diff.test.ts checks it), and one entry is one name's,
 * so a repeat can only be within the run of its name: only that run is searched, not a set of every entry.
 */
export function distinctEntries<E extends Entry>(list: BySlot<E>): E[] {
  const out: E[] = [];
  let run = 0;
  for (let i = 0; i < list.entries.length; i++) {
    const entry = list.entries[i] as E;
    if (out.length > run && (out[run] as E).name !== entry.name) run = out.length;
    let seen = false;
    for (let j = run; j < out.length && !seen; j++) seen = out[j] === entry;
    if (!seen) out.push(entry);
  }
  return out;
}
