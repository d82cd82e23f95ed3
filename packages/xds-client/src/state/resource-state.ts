// One cache entry: a (type, name, dynamic parameters) subscription, its watchers, the last accepted resource, the
// TP2 variant it holds and the A88 cache state. Owned by the cache (resource-cache.ts); everything here runs in the
// client's mutation path, and watcher callbacks only go through the callback queue.
import type { Any } from "@bufbuild/protobuf/wkt";
import type { ResourceName } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import type { XdsError } from "../shared/xds-error.js";
import type { CallbackQueue } from "./callback-queue.js";

/** A88 cache states; they map one to one onto CSDS `ClientResourceStatus`. */
export type CacheState = "requested" | "does_not_exist" | "acked" | "nacked" | "received_error" | "timeout";

export type ResourceResult<T> =
  | { readonly ok: true; readonly resource: T; readonly version: string }
  | { readonly ok: false; readonly error: XdsError };

export interface ResourceWatcher<T> {
  /** The resource, or an error that replaces it (the watcher must stop using any earlier resource). */
  onResourceChanged(result: ResourceResult<T>): void | Promise<void>;
  /** A problem that does not change the resource the watcher has (if any). */
  onAmbientError(error: XdsError): void | Promise<void>;
  /**
   * The last ambient error no longer holds: the resource the watcher has is current again (A88's ambient error with
   * an OK status; see docs/decisions.md#the-watcher-api). Optional: a watcher without it is given the resource again.
   */
  onAmbientErrorCleared?(): void | Promise<void>;
}

export interface WatcherEntry {
  readonly watcher: ResourceWatcher<unknown>;
  active: boolean;
}

export interface CachedResource {
  readonly value: unknown;
  version: string;
  /**
   * The value of the resource's `Any` as received (wrapper removed), one character per byte (resource-bytes.ts), for
   * CSDS; its type URL is the entry's.
   */
  readonly bytes: string;
  /** The TP2 variant it is. */
  readonly variant: HeldVariant;
  readonly lastUpdated: number;
}

/** CSDS `error_state`: a rejected update (version and time set), or details only (the timer fired). */
export interface ErrorState {
  readonly details: string;
  readonly version?: string;
  readonly time?: number;
  readonly failedConfiguration?: Any;
}

/** The TP2 variant a subscription holds: the canonical text of its constraints ("" for none). */
export interface HeldVariant {
  readonly key: string;
  /** The `resource_name` it came with, when it had constraints (CSDS reports it). */
  readonly resourceName?: ResourceName;
}

interface Scope {
  readonly authority: string;
  readonly typeUrl: string;
  readonly queue: CallbackQueue;
}

/** The scopes of each client (by its queue), by authority and type. */
const scopes = new WeakMap<CallbackQueue, Map<string, Scope>>();

function scopeOf(authority: string, typeUrl: string, queue: CallbackQueue): Scope {
  let byKey = scopes.get(queue);
  if (byKey === undefined) {
    byKey = new Map();
    scopes.set(queue, byKey);
  }
  const key = `${authority}\u0000${typeUrl}`;
  let scope = byKey.get(key);
  if (scope === undefined) {
    scope = Object.freeze({ authority, typeUrl, queue });
    byKey.set(key, scope);
  }
  return scope;
}

export class ResourceState {
  /** The watchers: one without a Set (the common case), or a Set of two or more. */
  private watching: WatcherEntry | Set<WatcherEntry> | undefined;
  state: CacheState = "requested";
  resource: CachedResource | undefined;
  /** The entry's own latest error (data error, server error, deletion, timer): ambient while cached, else a result. */
  error: XdsError | undefined;
  /** The last rejected update, for CSDS `error_state`. */
  errorState: ErrorState | undefined;
  /** Bytes of the last invalid update (as `CachedResource.bytes`), to suppress repeating the same error to watchers. */
  lastInvalid: string | undefined;
  /** Legacy A53 mode: a deletion is being ignored. */
  deletionIgnored = false;
  /** The variant the server last sent for this subscription (a resource, valid or not, or an error). */
  variant: HeldVariant | undefined;
  /** The mark of the last `SeenMarks` that counted this entry (cache/seen-marks.ts); 0 for none. */
  seenMark = 0;
  /** The watchers were told an ambient error that nothing has cleared since. */
  private ambientPending = false;

  /** What the entries of one authority and type share (one object for all of them, not three fields each). */
  private readonly scope: Scope;

  constructor(
    authority: string,
    typeUrl: string,
    readonly name: string,
    readonly parameters: Readonly<Record<string, string>>,
    readonly parametersKey: string,
    queue: CallbackQueue,
  ) {
    this.scope = scopeOf(authority, typeUrl, queue);
  }

  get authority(): string {
    return this.scope.authority;
  }

  get typeUrl(): string {
    return this.scope.typeUrl;
  }

  /** How many watchers the entry has. */
  get watcherCount(): number {
    const watching = this.watching;
    return watching === undefined ? 0 : watching instanceof Set ? watching.size : 1;
  }

  addWatcher(entry: WatcherEntry): void {
    const watching = this.watching;
    if (watching === undefined) this.watching = entry;
    else if (watching instanceof Set) watching.add(entry);
    else if (watching !== entry) this.watching = new Set([watching, entry]);
  }

  /** Removes a watcher; false when it was not one. */
  removeWatcher(entry: WatcherEntry): boolean {
    const watching = this.watching;
    if (watching === entry) {
      this.watching = undefined;
      return true;
    }
    if (!(watching instanceof Set) || !watching.delete(entry)) return false;
    if (watching.size === 1) this.watching = watching.values().next().value;
    return true;
  }

  /** Whether some watcher entry passes `test` (no array made). */
  hasWatcher(test: (entry: WatcherEntry) => boolean): boolean {
    const watching = this.watching;
    if (watching === undefined) return false;
    if (!(watching instanceof Set)) return test(watching);
    for (const entry of watching) if (test(entry)) return true;
    return false;
  }

  /** The watchers, in the order they came. */
  watchers(): readonly WatcherEntry[] {
    const watching = this.watching;
    return watching === undefined ? [] : watching instanceof Set ? [...watching] : [watching];
  }

  /** No ambient error the watchers were told is left to clear. */
  get settled(): boolean {
    return !this.ambientPending;
  }

  /** Requested and not answered yet: what the does-not-exist timer waits for, and what A71 calls uncached. */
  isWaiting(): boolean {
    return this.state === "requested" && this.watching !== undefined;
  }

  /** Delivers the cached resource to every watcher (or one). */
  notifyResource(only?: WatcherEntry): void {
    const resource = this.resource;
    if (!resource) return;
    if (!only) this.ambientPending = false;
    const watching = only ?? this.watching;
    if (watching === undefined) return;
    const result = Object.freeze({ ok: true as const, resource: resource.value, version: resource.version });
    const { queue } = this.scope;
    if (!(watching instanceof Set)) queue.pushChange(watching, result);
    else for (const entry of [...watching]) queue.pushChange(entry, result);
  }

  /** Sets the entry's error and delivers it: ambient while a resource is cached, as the result otherwise. */
  notifyError(error: XdsError): void {
    this.error = error;
    this.deliverError(error);
  }

  /** Delivers an error that is not the entry's own (the authority's servers are unreachable). */
  notifyConnectivity(error: XdsError): void {
    this.deliverError(error);
  }

  /**
   * The ambient error the watchers were told no longer holds (an identical resource arrived, or the servers are
   * reachable again): `onAmbientErrorCleared`, or the resource again for watchers without it.
   */
  notifyCleared(): void {
    const resource = this.resource;
    if (!this.ambientPending || !resource) return;
    this.ambientPending = false;
    const result = Object.freeze({ ok: true as const, resource: resource.value, version: resource.version });
    this.forEach(undefined, (w) => (w.onAmbientErrorCleared ? w.onAmbientErrorCleared() : w.onResourceChanged(result)));
  }

  /** What a new watcher is owed: the resource, then the entry's error, then the outage, in that order. */
  catchUp(entry: WatcherEntry, outage: XdsError | undefined): void {
    this.notifyResource(entry);
    for (const error of [this.error, outage]) {
      if (error === undefined) continue;
      if (this.resource) this.forEach(entry, (w) => w.onAmbientError(error));
      else {
        const result = Object.freeze({ ok: false as const, error });
        this.forEach(entry, (w) => w.onResourceChanged(result));
      }
    }
  }

  /** The A78 `grpc.xds.cache_state` label. */
  cacheStateLabel(): string {
    const cached = this.resource !== undefined;
    switch (this.state) {
      case "does_not_exist":
        return cached ? "does_not_exist_but_cached" : "does_not_exist";
      case "nacked":
        return cached ? "nacked_but_cached" : "nacked";
      case "received_error":
        return cached ? "received_error_but_cached" : "received_error";
      default:
        return this.state;
    }
  }

  private deliverError(error: XdsError): void {
    if (this.resource) {
      this.ambientPending = true;
      this.forEach(undefined, (w) => w.onAmbientError(error));
    } else {
      this.ambientPending = false;
      const result = Object.freeze({ ok: false as const, error });
      this.forEach(undefined, (w) => w.onResourceChanged(result));
    }
  }

  private forEach(only: WatcherEntry | undefined, call: (watcher: ResourceWatcher<unknown>) => unknown): void {
    const watching = only ?? this.watching;
    if (watching === undefined) return;
    if (!(watching instanceof Set)) {
      this.scope.queue.push(() => (watching.active ? call(watching.watcher) : undefined));
      return;
    }
    for (const entry of [...watching]) {
      this.scope.queue.push(() => (entry.active ? call(entry.watcher) : undefined));
    }
  }
}

/** A stable, unambiguous key for a parameter map (sorted pairs). Empty for no parameters. */
export function parametersKey(parameters: Readonly<Record<string, string>>): string {
  const keys = Object.keys(parameters);
  if (keys.length === 0) return "";
  keys.sort();
  return JSON.stringify(keys.map((k) => [k, parameters[k]]));
}

const SPECIAL = /[%,={}]/g;
const percentEncode = (text: string) => text.replace(SPECIAL, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * A parameter map as people read it, for CSDS names and metric labels: `k1=v1,k2=v2` sorted by key, with `%`, `,`,
 * `=`, `{` and `}` percent-encoded so that two maps never read the same (docs/decisions.md#variants-in-csds-and-metrics).
 */
export function parametersText(parameters: Readonly<Record<string, string>>): string {
  return Object.keys(parameters)
    .sort()
    .map((k) => `${percentEncode(k)}=${percentEncode(parameters[k]!)}`)
    .join(",");
}
