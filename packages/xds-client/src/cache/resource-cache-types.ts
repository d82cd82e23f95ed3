// What the cache is to the rest of the client: its options and its interface (the implementation: resource-cache.ts).
import type { XdsServerConfig } from "../bootstrap/bootstrap-types.js";
import type { ScopedLogger } from "../observability/logger.js";
import type { MetricLabels, XdsGaugeName, XdsMetricsRecorder } from "../observability/metrics.js";
import type { Clock } from "../shared/clock.js";
import type { XdsFeatures } from "../shared/features.js";
import type { XdsError } from "../shared/xds-error.js";
import type { CallbackQueue } from "../state/callback-queue.js";
import type { ResourceState, WatcherEntry } from "../state/resource-state.js";
import type { DecodedResponse } from "../wire/decoded-response.js";
import type { WildcardState, WildcardWatcherEntry } from "./wildcard-state.js";

export interface ResourceCacheOptions {
  readonly queue: CallbackQueue;
  readonly clock: Clock;
  readonly features: XdsFeatures;
  readonly nodeId: string;
  readonly metrics: XdsMetricsRecorder;
  readonly target: string;
  readonly log: ScopedLogger;
  /** Whether applying a response takes `reapplyIdentical`'s shortcut (see XdsClientInternals; default true). */
  readonly reapplyIdentical?: boolean;
}

export interface ResourceCache {
  /** The entry of a subscription; created in REQUESTED when new. */
  subscribe(
    authority: string,
    typeUrl: string,
    name: string,
    parameters: Readonly<Record<string, string>>,
  ): { readonly state: ResourceState; readonly created: boolean };
  /**
   * The wildcard subscription of `typeUrl` with these parameters in `authority` (docs/decisions.md#wildcard-watches);
   * created when new.
   */
  subscribeWildcard(
    authority: string,
    typeUrl: string,
    parameters: Readonly<Record<string, string>>,
  ): { readonly state: WildcardState; readonly created: boolean };
  /** Adds a wildcard watch and queues what it is owed: every name known, the answer, then `outage`. */
  addWildcardWatcher(state: WildcardState, entry: WildcardWatcherEntry, outage: XdsError | undefined): void;
  /** Removes a wildcard watch; with the last, the subscription and the names only it held go; then returns true. */
  removeWildcardWatcher(state: WildcardState, entry: WildcardWatcherEntry): boolean;
  /**
   * Delta: the versions of the resources the wildcards without parameters of `authorities` cover, for a new stream's
   * `initial_resource_versions` (so a resource removed while it was down is removed, docs/decisions.md#wildcard-watches).
   */
  coveredVersions(authorities: ReadonlySet<string>, typeUrl: string): Iterable<[string, string]>;
  /** Adds a watcher to an entry and queues what it is owed: the resource, the entry's error, then `outage`. */
  addWatcher(state: ResourceState, entry: WatcherEntry, outage: XdsError | undefined): void;
  /**
   * Removes a watcher; when it was the entry's last, removes the entry (out of CSDS and metrics at once) and returns
   * true: the subscription is over.
   */
  removeWatcher(state: ResourceState, entry: WatcherEntry): boolean;
  /** Every entry of `typeUrl` in `authority`. */
  statesOfType(authority: string, typeUrl: string): Iterable<ResourceState>;
  /** The entries of a canonical `name` of `typeUrl`, among `authorities` (only the name's own authority has any). */
  statesFor(authorities: ReadonlySet<string>, typeUrl: string, name: string): ResourceState[];
  /** What a server serving `authorities` must subscribe to for `typeUrl`, in a stable order. */
  subscriptionsOf(authorities: Iterable<string>, typeUrl: string): readonly ResourceState[];
  /** The types with at least one entry among `authorities`. */
  typesOf(authorities: Iterable<string>): string[];
  /** A71: an entry of `authority` still waits for its first answer (known not to exist counts as answered). */
  hasUncached(authority: string): boolean;
  /** Applies a response from `server`, which serves `authorities`; runs inside a callback group. */
  apply(authorities: ReadonlySet<string>, server: XdsServerConfig, response: DecodedResponse): void;
  /** A does-not-exist timer armed by a call on `server` fired. */
  expire(state: ResourceState, server: XdsServerConfig, transient: boolean): void;
  /** Every server of `authority` is unreachable: tell its watchers (ambient where cached). */
  outageStarted(authority: string, error: XdsError): void;
  /** `authority` is reachable again: the ambient errors its outage caused are over. */
  outageEnded(authority: string): void;
  /** Every entry, for CSDS. */
  entries(): Iterable<ResourceState>;
  /** A78 `grpc.xds_client.resources`, by authority, type, cache state and dynamic parameters. */
  recordGauges(record: (name: XdsGaugeName, value: number, labels: MetricLabels) => void): void;
  /** No watcher is called any more (the client closed). */
  deactivate(): void;
}
