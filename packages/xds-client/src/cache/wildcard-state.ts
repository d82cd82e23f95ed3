// A wildcard subscription (xDS's `*`: every resource of a type the server has, docs/decisions.md#wildcard-watches):
// one per (authority, type, dynamic parameters), held by the cache under the name `*` beside the subscriptions by
// name, which is how it goes on the wire (a `*` name, or a `*` locator with its parameters), has its does-not-exist
// timer, and shows in CSDS. The names it learns from responses are ordinary cache entries with one watcher entry of
// the wildcard's each (`covered`); an entry no watch of its own holds is left out of requests (the `*` asks for it).

import type { XdsError } from "../shared/xds-error.js";
import type { CallbackQueue } from "../state/callback-queue.js";
import {
  type ResourceResult,
  ResourceState,
  type ResourceWatcher,
  type WatcherEntry,
} from "../state/resource-state.js";

/** The name a wildcard subscription has on the wire and in the cache. */
export const WILDCARD = "*";

/** What a wildcard watch is told, resource by resource. */
export interface WildcardWatcher<T> {
  /**
   * A resource of the type: new or changed, or an error that replaces it (it became invalid, or a TP3 error). A
   * resource the server removed comes as a `does_not_exist` error; the watch then forgets the name.
   */
  onResourceChanged(name: string, result: ResourceResult<T>): void | Promise<void>;
  /**
   * A problem that leaves what the watcher has as it is: of one resource (`name`: a rejected update, a transient TP3
   * error), or of the subscription as a whole (no `name`: the servers are unreachable, or the watch could not be
   * made at all, e.g. `invalid_options`).
   */
  onAmbientError(error: XdsError, name?: string): void | Promise<void>;
  /** The last ambient error of `name` (or, without, of the subscription) no longer holds. Optional. */
  onAmbientErrorCleared?(name?: string): void | Promise<void>;
  /**
   * The server answered the subscription: every resource it has was given before this call (none, when it has
   * none). Once per watch. A server that says nothing for the does-not-exist timer's time (15 s; delta servers send
   * nothing for an empty type) counts as having answered that it has none.
   */
  onAnswered?(): void | Promise<void>;
}

/**
 * The entry of one wildcard watch: the watcher, and whether it is still watching. It is a watcher entry of the
 * wildcard's own cache entry too (timers and fallback count it), whose `watcher` turns what that entry could be told
 * into what concerns the subscription as a whole.
 */
export interface WildcardWatcherEntry extends WatcherEntry {
  readonly wildcardWatcher: WildcardWatcher<unknown>;
}

/** A new wildcard watch's entry. */
export function wildcardWatcherEntry(wildcardWatcher: WildcardWatcher<unknown>): WildcardWatcherEntry {
  return {
    wildcardWatcher,
    active: true,
    watcher: {
      onResourceChanged: (result) => (result.ok ? undefined : wildcardWatcher.onAmbientError(result.error)),
      onAmbientError: (error) => wildcardWatcher.onAmbientError(error),
      onAmbientErrorCleared: () => wildcardWatcher.onAmbientErrorCleared?.(),
    },
  };
}

/** A watcher entry of a wildcard in the entry of one name it covers: read by the cache to leave it out of requests. */
export interface CoveringEntry extends WatcherEntry {
  readonly wildcard: WildcardState;
}

/** Whether a watcher entry is a wildcard's (not a watch of the name). */
export function isCovering(entry: WatcherEntry): entry is CoveringEntry {
  return (entry as Partial<CoveringEntry>).wildcard !== undefined;
}

export class WildcardState extends ResourceState {
  /** The entries of the names it learned, and its watcher entry in each. */
  readonly covered = new Map<ResourceState, CoveringEntry>();
  readonly #queue: CallbackQueue;
  readonly #watching = new Set<WildcardWatcherEntry>();
  /** The server answered (or its timer fired). */
  #answered = false;
  /** The subscription-wide ambient error the watchers were told, until cleared. */
  #ambient = false;

  constructor(
    authority: string,
    typeUrl: string,
    parameters: Readonly<Record<string, string>>,
    parametersKey: string,
    queue: CallbackQueue,
  ) {
    super(authority, typeUrl, WILDCARD, parameters, parametersKey, queue);
    this.#queue = queue;
  }

  get answered(): boolean {
    return this.#answered;
  }

  /** The wildcard watches (the entry's own watcher entries stand for them, for timers and A71). */
  get wildcardWatchers(): ReadonlySet<WildcardWatcherEntry> {
    return this.#watching;
  }

  addWildcardWatcher(entry: WildcardWatcherEntry): void {
    this.#watching.add(entry);
    this.addWatcher(entry);
  }

  /** Removes a watch; true when it was the last. */
  removeWildcardWatcher(entry: WildcardWatcherEntry): boolean {
    entry.active = false;
    this.#watching.delete(entry);
    this.removeWatcher(entry);
    return this.#watching.size === 0;
  }

  /** A name's entry this wildcard covers from now on: its watcher entry there, which tells every watch. */
  cover(state: ResourceState): CoveringEntry {
    let entry = this.covered.get(state);
    if (entry) return entry;
    const name = state.name;
    // Called from the callback queue already: each watch is told at once, in the entry's place in the queue.
    const watcher: ResourceWatcher<unknown> = {
      onResourceChanged: (result) => this.#tellNow((w) => w.onResourceChanged(name, result)),
      // A removal is ambient for a watch that keeps the resource (A88); for a wildcard the name is gone.
      onAmbientError: (error) =>
        this.#tellNow((w) =>
          error.kind === "does_not_exist"
            ? w.onResourceChanged(name, Object.freeze({ ok: false as const, error }))
            : w.onAmbientError(error, name),
        ),
      onAmbientErrorCleared: () => this.#tellNow((w) => w.onAmbientErrorCleared?.(name)),
    };
    entry = { watcher, active: true, wildcard: this };
    this.covered.set(state, entry);
    state.addWatcher(entry);
    return entry;
  }

  /**
   * Stops covering a name: its callbacks already queued still run (the entry stays active), none is queued
   * afterwards. Returns whether the name's entry has no watcher left.
   */
  uncover(state: ResourceState): boolean {
    const entry = this.covered.get(state);
    if (!entry) return false;
    this.covered.delete(state);
    state.removeWatcher(entry);
    return state.watcherCount === 0;
  }

  /** The server answered: the watchers hear it once. */
  markAnswered(): void {
    if (this.#answered) return;
    this.#answered = true;
    this.state = "acked";
    this.#tell((w) => w.onAnswered?.());
  }

  /** What a new watch is owed: every name known (its resource, then its error), then the answer, then an outage. */
  catchUpWildcard(entry: WildcardWatcherEntry, outage: XdsError | undefined): void {
    const only = (call: (w: WildcardWatcher<unknown>) => unknown) =>
      this.#queue.push(() => (entry.active ? call(entry.wildcardWatcher) : undefined));
    for (const state of this.covered.keys()) {
      const name = state.name;
      state.catchUp(
        {
          watcher: {
            onResourceChanged: (result) => entry.wildcardWatcher.onResourceChanged(name, result),
            onAmbientError: (error) => entry.wildcardWatcher.onAmbientError(error, name),
          },
          get active() {
            return entry.active;
          },
        },
        undefined,
      );
    }
    if (this.#answered) only((w) => w.onAnswered?.());
    if (outage !== undefined) only((w) => w.onAmbientError(outage));
  }

  /** Every server of the authority is unreachable: one ambient error for the subscription, not one per name. */
  override notifyConnectivity(error: XdsError): void {
    this.#ambient = true;
    this.#tell((w) => w.onAmbientError(error));
  }

  override notifyCleared(): void {
    if (!this.#ambient) return;
    this.#ambient = false;
    this.#tell((w) => w.onAmbientErrorCleared?.());
  }

  /**
   * Tells every active watch now (from inside a queued callback); what they return is awaited together, and the
   * first throw is rethrown once every watch was told.
   */
  #tellNow(call: (watcher: WildcardWatcher<unknown>) => unknown): Promise<void> | undefined {
    let pending: Promise<unknown>[] | undefined;
    let failure: { readonly error: unknown } | undefined;
    for (const entry of [...this.#watching]) {
      if (!entry.active) continue;
      try {
        const result = call(entry.wildcardWatcher);
        if (result instanceof Promise) {
          if (pending === undefined) pending = [result];
          else pending.push(result);
        }
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure !== undefined) throw failure.error;
    return pending === undefined ? undefined : Promise.all(pending).then(() => {});
  }

  #tell(call: (watcher: WildcardWatcher<unknown>) => unknown): void {
    for (const entry of [...this.#watching]) {
      this.#queue.push(() => (entry.active ? call(entry.wildcardWatcher) : undefined));
    }
  }
}
