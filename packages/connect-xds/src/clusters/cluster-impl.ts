// cluster_impl: the top of one cluster's policy tree. Drops calls by EDS drop category (only while its child is
// READY, as grpc-go does) and, when the cluster has an LRS server, counts every call on the LRS handle of the
// locality it went to (A64, A85 through @xdskit/orca-lrs-bridge) and every drop on the cluster's drop handle.
// Handles live while their locality is in the endpoints or a call counted on them is in flight.
import { Code, ConnectError } from "@connectrpc/connect";
import type { DropStats, LocalityStats, LrsClient } from "@xdskit/orca-lrs-bridge";
import type { ClusterUpdate, DropOverload, UpstreamTlsConfig } from "@xdskit/xds-client";
import type {
  CallEndInfo,
  CallTracker,
  CompletePick,
  ConnectivityState,
  LbEndpoint,
  LbHelper,
  LbLocality,
  LbPolicy,
  Picker,
  PickInfo,
  PickResult,
} from "../balancer/lb-policy.js";
import type { SecurityKey } from "../credentials/fallback-credentials.js";
import { withSecurity } from "../credentials/upstream-tls.js";
import { childHelper } from "../policies/child-helper.js";
import { acquireRequestCounter, type RequestCounter } from "../policies/circuit-breaker.js";

export interface ClusterImplConfig {
  readonly cluster: ClusterUpdate;
  /** The EDS resource name, when it differs from the cluster name (reported as `cluster_service_name`). */
  readonly edsServiceName?: string;
  readonly dropOverloads: readonly DropOverload[];
  /** The child (priority) policy and its parsed config. */
  readonly child: { readonly policy: string; readonly config: unknown };
}

/** Counts calls of one locality; released once the locality is gone and no counted call is in flight. */
class LocalityTracker implements CallTracker {
  inFlight = 0;
  removed = false;
  constructor(readonly stats: LocalityStats) {}
  onCallStarted(): void {
    this.inFlight++;
    this.stats.callStarted();
  }
  onCallEnded(info: CallEndInfo): void {
    this.stats.callFinished(info.code === 0 ? "ok" : "error", info.orcaReport);
    if (--this.inFlight === 0 && this.removed) this.stats.release();
  }
  remove(): void {
    this.removed = true;
    if (this.inFlight === 0) this.stats.release();
  }
}

/** A child tracker and a locality tracker, in that order. */
class BothTrackers implements CallTracker {
  constructor(
    private readonly inner: CallTracker,
    private readonly locality: LocalityTracker,
  ) {}
  onCallStarted(): void {
    this.inner.onCallStarted?.();
    this.locality.onCallStarted();
  }
  onCallEnded(info: CallEndInfo): void {
    this.inner.onCallEnded?.(info);
    this.locality.onCallEnded(info);
  }
}

/** A32: the call holds one of the cluster's `max_requests` slots from its pick to its end (or the pick's discard). */
class CircuitTracker implements CallTracker {
  constructor(
    private readonly inner: CallTracker | undefined,
    private readonly counter: RequestCounter,
  ) {}
  onCallStarted(): void {
    this.inner?.onCallStarted?.();
  }
  onCallEnded(info: CallEndInfo): void {
    this.counter.end();
    this.inner?.onCallEnded?.(info);
  }
  onPickDiscarded(): void {
    this.counter.end();
    this.inner?.onPickDiscarded?.();
  }
}

interface Drop {
  readonly category: string;
  readonly perMillion: number;
  readonly result: PickResult;
}

class ClusterImplPicker implements Picker {
  /** Wrapped complete picks by the child's pick object (child picks are built with their picker). */
  private readonly wrapped = new Map<CompletePick, CompletePick>();
  constructor(
    private readonly state: ConnectivityState,
    private readonly inner: Picker,
    private readonly drops: readonly Drop[],
    private readonly dropStats: DropStats | undefined,
    private readonly trackers: ReadonlyMap<string, LocalityTracker>,
    private readonly randomInt: (bound: number) => number,
    private readonly circuit: { readonly counter: RequestCounter; readonly max: number; readonly drop: PickResult },
  ) {}

  pick(info: PickInfo): PickResult {
    if (this.state === "READY") {
      for (let i = 0; i < this.drops.length; i++) {
        const drop = this.drops[i]!;
        if (this.randomInt(1_000_000) < drop.perMillion) {
          this.dropStats?.callDropped(drop.category);
          return drop.result;
        }
      }
    }
    const result = this.inner.pick(info);
    if (result.type !== "complete") return result;
    // A32: over max_requests in flight, the call is dropped (uncategorized in the load report). A complete pick
    // takes a slot at once (calls picking in the same tick must see it), given back when the call ends.
    if (this.circuit.counter.inFlight >= this.circuit.max) {
      this.dropStats?.callDropped();
      return this.circuit.drop;
    }
    this.circuit.counter.start();
    let wrapped = this.wrapped.get(result);
    if (wrapped === undefined) {
      const label = result.subchannel.endpoint.locality?.label;
      const locality = label === undefined ? undefined : this.trackers.get(label);
      const inner =
        locality === undefined
          ? result.tracker
          : result.tracker === undefined
            ? locality
            : new BothTrackers(result.tracker, locality);
      wrapped = Object.freeze({
        type: "complete",
        subchannel: result.subchannel,
        tracker: new CircuitTracker(inner, this.circuit.counter),
      });
      this.wrapped.set(result, wrapped);
    }
    return wrapped;
  }
}

export class ClusterImpl implements LbPolicy<ClusterImplConfig> {
  private child: LbPolicy | undefined;
  private childName = "";
  private drops: readonly Drop[] = [];
  private dropStats: DropStats | undefined;
  private dropKey = "";
  private trackers = new Map<string, LocalityTracker>();
  private state: ConnectivityState = "CONNECTING";
  private picker: Picker | undefined;
  private closed = false;
  private circuit:
    | { counter: RequestCounter; unref: () => void; key: string; max: number; drop: PickResult }
    | undefined;

  /** The key of the security the child's subchannels were made with (upstream-tls.ts). */
  private securityKey: string | undefined;

  constructor(
    private readonly helper: LbHelper,
    private readonly lrs: () => LrsClient | undefined,
    private readonly security: (config: UpstreamTlsConfig | undefined) => SecurityKey | undefined = () => undefined,
  ) {}

  update({
    config,
    endpoints,
    resolutionNote,
  }: {
    config: ClusterImplConfig;
    endpoints: readonly LbEndpoint[];
    resolutionNote?: string;
  }): void {
    this.drops = config.dropOverloads.map((drop) => ({
      category: drop.category,
      perMillion: drop.dropsPerMillion,
      result: Object.freeze({
        type: "drop",
        error: new ConnectError(`call dropped by load balancing (category "${drop.category}")`, Code.Unavailable),
      }),
    }));
    this.updateLoadReporting(config, endpoints);
    this.updateCircuitBreaker(config);
    // A29: the cluster's TLS rides on its endpoints to the connection pool. Policies keep their subchannels by
    // address, so a change of TLS makes the child anew: every connection is made with the new security.
    const security = this.security(config.cluster.security);
    const securityChanged = security?.key !== this.securityKey;
    this.securityKey = security?.key;
    if (this.child === undefined || this.childName !== config.child.policy || securityChanged) {
      this.child?.close();
      const factory = this.helper.registry.get(config.child.policy);
      if (factory === undefined) throw new Error(`LB policy ${config.child.policy} is not registered`);
      this.childName = config.child.policy;
      this.child = factory.create(
        childHelper(this.helper, (state, picker) => {
          if (this.closed) return;
          this.state = state;
          this.picker = picker;
          this.publish();
        }),
      );
    }
    this.child.update({
      config: config.child.config,
      endpoints: withSecurity(endpoints, security),
      ...(resolutionNote === undefined ? {} : { resolutionNote }),
    });
    // New drop rules or handles apply to the current child picker too.
    this.publish();
  }

  private updateLoadReporting(config: ClusterImplConfig, endpoints: readonly LbEndpoint[]): void {
    const server = config.cluster.lrsServer;
    const lrs = server === undefined ? undefined : this.lrs();
    const base =
      server === undefined || lrs === undefined
        ? undefined
        : {
            server,
            clusterName: config.cluster.name,
            ...(config.edsServiceName === undefined ? {} : { edsServiceName: config.edsServiceName }),
          };
    const dropKey = base === undefined ? "" : `${server?.key}\n${base.clusterName}\n${config.edsServiceName ?? ""}`;
    if (dropKey !== this.dropKey) {
      this.dropStats?.release();
      this.dropStats = base === undefined ? undefined : lrs?.dropStats(base);
      this.dropKey = dropKey;
      for (const tracker of this.trackers.values()) tracker.remove();
      this.trackers = new Map();
    }
    if (base === undefined || lrs === undefined) return;
    const localities = new Map<string, LbLocality>();
    for (const endpoint of endpoints) {
      if (endpoint.locality !== undefined) localities.set(endpoint.locality.label, endpoint.locality);
    }
    const next = new Map<string, LocalityTracker>();
    for (const [label, locality] of localities) {
      const tracker =
        this.trackers.get(label) ??
        new LocalityTracker(
          lrs.localityStats({ ...base, locality: locality.name, propagation: config.cluster.orcaPropagation }),
        );
      next.set(label, tracker);
    }
    for (const [label, tracker] of this.trackers) if (next.get(label) !== tracker) tracker.remove();
    this.trackers = next;
  }

  /** A32: the process-wide in-flight counter of this cluster (and EDS service name), and its limit. */
  private updateCircuitBreaker(config: ClusterImplConfig): void {
    const key = `${config.cluster.name}\n${config.edsServiceName ?? ""}`;
    const max = config.cluster.maxConcurrentRequests;
    if (this.circuit?.key !== key) {
      this.circuit?.unref();
      const { counter, unref } = acquireRequestCounter(config.cluster.name, config.edsServiceName);
      const drop: PickResult = Object.freeze({
        type: "drop",
        error: new ConnectError(
          `call dropped by circuit breaking: cluster "${config.cluster.name}" has max_requests calls in flight`,
          Code.Unavailable,
        ),
      });
      this.circuit = { counter, unref, key, max, drop };
    }
    this.circuit.max = max;
  }

  private publish(): void {
    if (this.picker === undefined || this.closed || this.circuit === undefined) return;
    this.helper.updateState(
      this.state,
      new ClusterImplPicker(
        this.state,
        this.picker,
        this.drops,
        this.dropStats,
        this.trackers,
        this.helper.randomInt,
        this.circuit,
      ),
    );
  }

  exitIdle(): void {
    this.child?.exitIdle();
  }

  close(): void {
    this.closed = true;
    this.child?.close();
    this.child = undefined;
    for (const tracker of this.trackers.values()) tracker.remove();
    this.trackers.clear();
    this.dropStats?.release();
    this.dropStats = undefined;
    this.circuit?.unref();
    this.circuit = undefined;
  }
}
