import { LayeredMap } from "./layered-map.js";
import type { ErrorEntry, ResourceEntry } from "./resource-set.js";
import type { TypeSubscription } from "./subscription.js";

/** Marks a name the server told a delta client does not exist (in `removed_resources`). */
export const NOT_FOUND_SENT = -1;
/** A version a delta client claims to hold that this server never issued. */
export const UNKNOWN_VERSION = -2;

/** A version string from a client, as this server's numeric versions (which are decimal counters). */
export function parseVersion(version: string): number {
  return /^[1-9]\d{0,15}$/.test(version) ? Number(version) : UNKNOWN_VERSION;
}

/**
 * What the server believes one client holds of one type. Immutable: a response makes a new state, and streams that
 * got the same responses share one state (response-plan.ts memoizes the step), so a server fanning one snapshot out
 * to many streams keeps one copy of it, not one per stream.
 */
export interface HeldState {
  /** name -> version of the resource the client holds (delta also: NOT_FOUND_SENT, UNKNOWN_VERSION). */
  readonly resources: LayeredMap<number>;
  /** name -> version of the resource error the client holds instead of the resource. */
  readonly errors: LayeredMap<number>;
}

export const EMPTY_HELD: HeldState = Object.freeze({
  resources: LayeredMap.empty<number>(),
  errors: LayeredMap.empty<number>(),
});

/** A delta client's `initial_resource_versions`: what it says it holds after a reconnect. */
export function heldFromInitialVersions(versions: Readonly<Record<string, string>>): HeldState {
  const entries = Object.entries(versions);
  if (entries.length === 0) return EMPTY_HELD;
  return {
    resources: LayeredMap.of(entries.map(([name, version]) => [name, parseVersion(version)])),
    errors: EMPTY_HELD.errors,
  };
}

/**
 * What the client holds after a response: `replace` drops what it held (a SotW full-state response lists everything),
 * `resources` and `errors` are what the response carried (a resource replaces its error and the other way round);
 * of the names it told the client are gone, `notFound` stay known as not existing (subscribed by name) and
 * `forgotten` are dropped.
 */
export function heldAfter(
  held: HeldState,
  sent: {
    readonly replace: boolean;
    readonly resources: readonly ResourceEntry[];
    readonly errors: readonly ErrorEntry[];
    readonly notFound?: readonly string[];
    readonly forgotten?: readonly string[];
  },
): HeldState {
  const resources = (sent.replace ? LayeredMap.empty<number>() : held.resources).with(
    [
      ...sent.resources.map((entry) => [entry.name, entry.version] as const),
      ...(sent.notFound ?? []).map((name) => [name, NOT_FOUND_SENT] as const),
    ],
    [...sent.errors.map((error) => error.name), ...(sent.forgotten ?? [])],
  );
  const errors = held.errors.with(
    sent.errors.map((error) => [error.name, error.version] as const),
    sent.resources.map((entry) => entry.name),
  );
  return resources === held.resources && errors === held.errors ? held : { resources, errors };
}

/**
 * Forgets what the client held of names it no longer subscribes to (so subscribing again sends them again). The same
 * state when nothing is dropped, so shared states stay shared.
 */
export function heldPruned(held: HeldState, sub: TypeSubscription): HeldState {
  // A wildcard subscribes to every resource; errors are held only for names subscribed by name.
  if (sub.wildcard && held.errors.size === 0) return held;
  const resources = held.resources.with(
    [],
    [...held.resources.keys()].filter((name) => !sub.isSubscribed(name)),
  );
  const errors = held.errors.with(
    [],
    [...held.errors.keys()].filter((name) => !sub.names.has(name)),
  );
  return resources === held.resources && errors === held.errors ? held : { resources, errors };
}
