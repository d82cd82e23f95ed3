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
  readonly resources: ReadonlyMap<string, number>;
  /** name -> version of the resource error the client holds instead of the resource. */
  readonly errors: ReadonlyMap<string, number>;
}

export const EMPTY_HELD: HeldState = Object.freeze({ resources: new Map(), errors: new Map() });

/** A delta client's `initial_resource_versions`: what it says it holds after a reconnect. */
export function heldFromInitialVersions(versions: Readonly<Record<string, string>>): HeldState {
  const resources = new Map<string, number>();
  for (const [name, version] of Object.entries(versions)) resources.set(name, parseVersion(version));
  return resources.size === 0 ? EMPTY_HELD : { resources, errors: EMPTY_HELD.errors };
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
  const resources = sent.replace ? new Map<string, number>() : new Map(held.resources);
  const errors = new Map(held.errors);
  for (const entry of sent.resources) {
    resources.set(entry.name, entry.version);
    errors.delete(entry.name);
  }
  for (const error of sent.errors) {
    errors.set(error.name, error.version);
    resources.delete(error.name);
  }
  for (const name of sent.notFound ?? []) resources.set(name, NOT_FOUND_SENT);
  for (const name of sent.forgotten ?? []) resources.delete(name);
  return { resources, errors };
}

/**
 * Forgets what the client held of names it no longer subscribes to (so subscribing again sends them again). The same
 * state when nothing is dropped, so shared states stay shared.
 */
export function heldPruned(held: HeldState, sub: TypeSubscription): HeldState {
  // A wildcard subscribes to every resource; errors are held only for names subscribed by name.
  if (sub.wildcard && held.errors.size === 0) return held;
  const dropResource = (name: string): boolean => !sub.isSubscribed(name);
  const dropError = (name: string): boolean => !sub.names.has(name);
  let resources: Map<string, number> | undefined;
  for (const name of held.resources.keys()) {
    if (!dropResource(name)) continue;
    resources ??= new Map(held.resources);
    resources.delete(name);
  }
  let errors: Map<string, number> | undefined;
  for (const name of held.errors.keys()) {
    if (!dropError(name)) continue;
    errors ??= new Map(held.errors);
    errors.delete(name);
  }
  if (!resources && !errors) return held;
  return { resources: resources ?? held.resources, errors: errors ?? held.errors };
}
