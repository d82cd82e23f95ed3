import { type HeldState, NOT_FOUND_SENT } from "./held-state.js";
import type { Entry, ErrorEntry, ResourceEntry } from "./resource-set.js";
import type { TypeSubscription } from "./subscription.js";

/** How what a client holds of a type differs from the type's resources, for what it subscribes to. */
export interface HeldDiff {
  /** Subscribed resources it does not hold at their version. */
  readonly changed: readonly ResourceEntry[];
  /** Resource errors it does not hold, for names subscribed by name (TP3 does not cover wildcards). */
  readonly errors: readonly ErrorEntry[];
  /** Names it holds, or subscribes to by name, that exist no more (and that it was not told so). */
  readonly removed: readonly string[];
}

/**
 * The difference between `holds` and `entries`. With `changedNames` (every name changed since a version `holds` was
 * settled at: it then held exactly what that version had for this subscription), only those names are looked at;
 * without, every subscribed and held name is. Both give the same sets (held-diff.test.ts checks it); the lists
 * follow the set's order, or the subscription's for names subscribed by name when everything is compared.
 */
export function diffHeld(
  holds: HeldState,
  sub: TypeSubscription,
  entries: ReadonlyMap<string, Entry> | undefined,
  changedNames?: readonly string[],
): HeldDiff {
  if (changedNames) return diffNames(holds, sub, entries, changedNames);
  const changed = sub.subscribedResources(entries).filter((e) => holds.resources.get(e.name) !== e.version);
  const errors = sub.pendingErrors(entries, holds.errors);
  const removed: string[] = [];
  for (const [name, version] of holds.resources) {
    if (version !== NOT_FOUND_SENT && entries?.get(name) === undefined) removed.push(name);
  }
  for (const name of sub.names) {
    if (!holds.resources.has(name) && entries?.get(name) === undefined) removed.push(name);
  }
  return { changed, errors, removed };
}

function diffNames(
  holds: HeldState,
  sub: TypeSubscription,
  entries: ReadonlyMap<string, Entry> | undefined,
  names: readonly string[],
): HeldDiff {
  const changed: ResourceEntry[] = [];
  const errors: ErrorEntry[] = [];
  const removed: string[] = [];
  for (const name of names) {
    const entry = entries?.get(name);
    const held = holds.resources.get(name);
    if (entry === undefined) {
      if (held === undefined ? sub.names.has(name) : held !== NOT_FOUND_SENT) removed.push(name);
    } else if (!sub.isSubscribed(name)) {
      // Not subscribed: nothing is due.
    } else if (entry.kind === "resource") {
      if (held !== entry.version) changed.push(entry);
    } else if (sub.names.has(name) && holds.errors.get(name) !== entry.version) {
      errors.push(entry);
    }
  }
  return { changed, errors, removed };
}
