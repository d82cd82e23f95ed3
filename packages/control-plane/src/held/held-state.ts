import type { Entry, ErrorEntry, ResourceEntry, VariantRef } from "../resources/entry.js";
import { plainKey, type TypeSubscription } from "../subscriptions/subscription.js";
import { LayeredMap } from "./layered-map.js";

/** Marks a subscription the server told a delta client does not exist (in `removed_resources`). */
export const NOT_FOUND_SENT = -1;
/** A version a delta client claims to hold that this server never issued. */
export const UNKNOWN_VERSION = -2;

/** A constrained variant a client holds: the variant and the version it was sent at. */
export interface HeldVariant {
  readonly variant: VariantRef;
  readonly version: number;
}

/**
 * What a client holds for one subscription: the version of an unconstrained resource (or error), NOT_FOUND_SENT,
 * UNKNOWN_VERSION, or a constrained variant. Equal values are identical (`===`), so comparing is cheap.
 */
export type HeldValue = number | HeldVariant;

const heldVariants = new WeakMap<Entry, HeldVariant>();

/** What a client holds once sent `entry`: its version, or for a variant one shared object per entry. */
export function heldValueOf(entry: Entry): HeldValue {
  if (entry.variant === undefined) return entry.version;
  let held = heldVariants.get(entry);
  if (!held) {
    held = Object.freeze({ variant: entry.variant, version: entry.version });
    heldVariants.set(entry, held);
  }
  return held;
}

/** The version of a held value (NOT_FOUND_SENT and UNKNOWN_VERSION included). */
export function heldVersion(value: HeldValue): number {
  return typeof value === "number" ? value : value.version;
}

/** A version string from a client, as this server's numeric versions (which are decimal counters). */
export function parseVersion(version: string): number {
  return /^[1-9]\d{0,15}$/.test(version) ? Number(version) : UNKNOWN_VERSION;
}

/**
 * What the server believes one client holds of one type, per subscription (subscription.ts's slot keys: a name, or a
 * name with parameters). Immutable: a response makes a new state, and streams that got the same responses share
 * one state (response-plan.ts memoizes the step), so a server fanning one snapshot out to many streams keeps one
 * copy of it, not one per stream.
 */
export interface HeldState {
  /** slot key -> the resource the client holds for that subscription (delta also: NOT_FOUND_SENT, UNKNOWN_VERSION). */
  readonly resources: LayeredMap<HeldValue>;
  /** slot key -> the resource error the client holds instead of the resource. */
  readonly errors: LayeredMap<HeldValue>;
}

export const EMPTY_HELD: HeldState = Object.freeze({
  resources: LayeredMap.empty<HeldValue>(),
  errors: LayeredMap.empty<HeldValue>(),
});

/**
 * A delta client's `initial_resource_versions`: what it says it holds after a reconnect, by name. They stand for
 * subscriptions by name; a subscription with parameters is sent its variant again.
 */
export function heldFromInitialVersions(versions: Readonly<Record<string, string>>): HeldState {
  const entries = Object.entries(versions);
  if (entries.length === 0) return EMPTY_HELD;
  return {
    resources: LayeredMap.of(entries.map(([name, version]) => [plainKey(name), parseVersion(version)])),
    errors: EMPTY_HELD.errors,
  };
}

/**
 * Subscriptions (slot keys) and the entry each gets, as two arrays of one length: a response of many resources makes
 * two arrays, not one per subscription.
 */
export interface BySlot<E extends Entry> {
  readonly keys: readonly string[];
  readonly entries: readonly E[];
}

/** What a response carried, per subscription: each subscription (slot key) at most once in `resources`. */
export interface SentBySlot {
  /** `replace`: the client holds nothing else (a SotW full-state response lists everything). */
  readonly replace: boolean;
  readonly resources: BySlot<ResourceEntry>;
  readonly errors: BySlot<ErrorEntry>;
  /** Subscriptions told their resource does not exist: remembered as such. */
  readonly notFound?: readonly string[];
  /** Subscriptions whose resource is gone, and that are forgotten (a wildcard's). */
  readonly forgotten?: readonly string[];
}

/** What the client holds after a response: a resource replaces the subscription's error and the other way round. */
export function heldAfter(held: HeldState, sent: SentBySlot): HeldState {
  const notFound = sent.notFound ?? [];
  const forgotten = sent.forgotten ?? [];
  const { resources: got, errors: failed } = sent;
  const keys = notFound.length === 0 ? got.keys : [...got.keys, ...notFound];
  const values: HeldValue[] = got.entries.map(heldValueOf);
  for (let i = 0; i < notFound.length; i++) values.push(NOT_FOUND_SENT);
  // A full-state response is applied as changes too (a re-push with one resource changed changes one), then what it
  // does not list is dropped: with every listed subscription held, the sizes tell whether anything else is.
  let resources = held.resources.with(
    keys,
    values,
    forgotten.length === 0 ? failed.keys : [...failed.keys, ...forgotten],
  );
  if (sent.replace && resources.size !== keys.length) {
    const listed = new Set(keys);
    resources = resources.with(
      [],
      [],
      [...resources.keys()].filter((key) => !listed.has(key)),
    );
  }
  const errors = held.errors.with(failed.keys, failed.entries.map(heldValueOf), [...keys, ...forgotten]);
  return resources === held.resources && errors === held.errors ? held : { resources, errors };
}

/**
 * Forgets what the client held for subscriptions it no longer has (so subscribing again sends them again). The same
 * state when nothing is dropped, so shared states stay shared. Errors are held only for explicit subscriptions.
 */
export function heldPruned(held: HeldState, sub: TypeSubscription): HeldState {
  const resources = held.resources.with(
    [],
    [],
    [...held.resources.keys()].filter((key) => !sub.hasSlot(key)),
  );
  const errors = held.errors.with(
    [],
    [],
    [...held.errors.keys()].filter((key) => !sub.slots.has(key)),
  );
  return resources === held.resources && errors === held.errors ? held : { resources, errors };
}
