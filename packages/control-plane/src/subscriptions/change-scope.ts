import { type Expr, matches } from "@xdskit/constraint-matcher";
import type { TypeSubscription } from "./subscription.js";

/** Every variant of a name may have changed (it was removed whole, or the set was cleared or replaced). */
export const WHOLE_NAME = null;

/** Names changed at once, per type, with the constraints of each variant that changed (or WHOLE_NAME). */
export type ChangedVariants = ReadonlyMap<string, ReadonlyMap<string, readonly Expr[] | typeof WHOLE_NAME>>;

/** Past this many names changed in one type, every stream subscribed to the type is woken without looking. */
export const NAMES_LOOKED_AT = 64;

/**
 * Whether a change of a type can change what a stream subscribing as `sub` gets, by the variants it touched. A
 * subscription gets the most preferred variant its parameters match (variant-group.ts: a total order), and a
 * variant's constraints never change (they are its identity). So a variant whose constraints a subscription's
 * parameters do not match was not its choice before and is not after, whether it was added, updated or removed:
 * that subscription's choice, what its client holds and so every response it is due stay the same. A stream none
 * of whose subscriptions of a changed name match a changed variant is left alone: nothing is planned for it, and
 * the next time it flushes for another reason its held state is compared with everything changed since the
 * version it settled at (change-log.ts), this change included, which finds nothing for it.
 *
 * False only when sure: an unknown change (WHOLE_NAME, or too many names to look at) concerns every subscriber; a
 * type the change did not touch, none.
 */
export function concerns(sub: TypeSubscription, changed: ChangedVariants): boolean {
  const names = changed.get(sub.typeUrl);
  if (names === undefined) return false;
  if (names.size > NAMES_LOOKED_AT) return true;
  for (const [name, variants] of names) {
    if (!sub.isSubscribed(name)) continue;
    if (variants === WHOLE_NAME) return true;
    // A wildcard covers the name as a subscription with its parameters (the client may also name it so).
    for (const wildcard of sub.wildcards) if (variants.some((c) => matches(c, wildcard.params))) return true;
    for (const slot of sub.explicitSlotsOf(name)) {
      for (const constraints of variants) if (matches(constraints, slot.params)) return true;
    }
  }
  return false;
}
