// One cache entry: a (type, name, dynamic parameters) subscription, its watchers, the last accepted resource and
// the A88 cache state. Everything here runs in the client's mutation path; watcher callbacks only go through the
// callback queue.
import type { Any } from "@bufbuild/protobuf/wkt";
import type { CallbackQueue } from "./callback-queue.js";
import type { Clock } from "./clock.js";
import type { XdsError } from "./xds-error.js";

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
}

export interface WatcherEntry {
  readonly watcher: ResourceWatcher<unknown>;
  active: boolean;
}

export interface CachedResource {
  readonly value: unknown;
  version: string;
  /** The resource as received (the inner Any, wrapper removed), for CSDS. */
  readonly any: Any;
  readonly lastUpdated: number;
}

export interface ErrorState {
  readonly details: string;
  readonly version?: string;
  readonly time: number;
  readonly failedConfiguration?: Any;
}

export class ResourceState {
  readonly watchers = new Set<WatcherEntry>();
  state: CacheState = "requested";
  resource: CachedResource | undefined;
  /** The latest error: delivered as ambient while a resource is cached, else as the watchers' result. */
  error: XdsError | undefined;
  /** The last rejected update, for CSDS `error_state`. */
  errorState: ErrorState | undefined;
  /** Bytes of the last invalid update, to suppress repeating the same error to watchers. */
  lastInvalid: Uint8Array | undefined;
  private timer: unknown;
  /** Legacy A53 mode: a deletion is being ignored. */
  deletionIgnored = false;

  constructor(
    readonly typeUrl: string,
    readonly name: string,
    readonly parameters: Readonly<Record<string, string>>,
    readonly parametersKey: string,
    private readonly queue: CallbackQueue,
    private readonly clock: Clock,
  ) {}

  get timerRunning(): boolean {
    return this.timer !== undefined;
  }

  /** Starts the does-not-exist timer (A57); `fire` runs once unless cancelled first. */
  startTimer(ms: number, fire: () => void): void {
    this.cancelTimer();
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      fire();
    }, ms);
  }

  cancelTimer(): void {
    if (this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /** Delivers the cached resource to every watcher (or one). */
  notifyResource(only?: WatcherEntry): void {
    const resource = this.resource;
    if (!resource) return;
    const result = Object.freeze({ ok: true as const, resource: resource.value, version: resource.version });
    this.forEach(only, (w) => w.onResourceChanged(result));
  }

  /** Sets `error` and delivers it: ambient while a resource is cached, as the result otherwise. */
  notifyError(error: XdsError): void {
    this.error = error;
    if (this.resource) this.forEach(undefined, (w) => w.onAmbientError(error));
    else {
      const result = Object.freeze({ ok: false as const, error });
      this.forEach(undefined, (w) => w.onResourceChanged(result));
    }
  }

  /** What a new watcher is owed: the resource, then the current error, in that order. */
  catchUp(entry: WatcherEntry): void {
    const error = this.error;
    if (this.resource) {
      this.notifyResource(entry);
      if (error) this.forEach(entry, (w) => w.onAmbientError(error));
    } else if (error) {
      const result = Object.freeze({ ok: false as const, error });
      this.forEach(entry, (w) => w.onResourceChanged(result));
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

  private forEach(only: WatcherEntry | undefined, call: (watcher: ResourceWatcher<unknown>) => unknown): void {
    const targets = only ? [only] : [...this.watchers];
    for (const entry of targets) {
      this.queue.push(() => (entry.active ? call(entry.watcher) : undefined));
    }
  }
}

/** A stable key for a parameter map: sorted `key=value` pairs. Empty for no parameters. */
export function parametersKey(parameters: Readonly<Record<string, string>>): string {
  const keys = Object.keys(parameters);
  if (keys.length === 0) return "";
  keys.sort();
  return JSON.stringify(keys.map((k) => [k, parameters[k]]));
}
