// Load figures per LRS server -> cluster (name, EDS service name) -> locality, turned into LRS ClusterStats.
// Every figure in a report is a delta since the server's previous report; in-progress is the current count.
import { create } from "@bufbuild/protobuf";
import {
  type ClusterStats,
  ClusterStatsSchema,
  type UpstreamLocalityStats,
  UpstreamLocalityStatsSchema,
} from "@xdskit/protos/envoy/config/endpoint/v3/load_report_pb";
import { type Clock, systemClock } from "./clock.js";
import { msToDuration } from "./duration.js";
import {
  emptySnapshot,
  isZeroSnapshot,
  type LocalitySnapshot,
  type LocalityStats,
  LocalityStatsImpl,
  type MetricTotal,
} from "./locality-stats.js";
import { type OrcaPropagationConfig, resolveOrcaLrsPropagation, resolvePropagation } from "./propagation.js";

/** The LRS server a cluster reports to. For `lrs_server: self`, the ADS server the Cluster came from. */
export interface LrsServer {
  /** `host:port` (a bootstrap `server_uri`) or an `http(s)://` URL. */
  readonly serverUri: string;
  /** Tells apart two configs of one URI (e.g. `@xdskit/xds-client`'s `XdsServerConfig.key`). Default `serverUri`. */
  readonly key?: string;
  /** For the default transport: plaintext (default) or TLS with optional PEM files (the bootstrap's shape). */
  readonly channelCredentials?: ChannelCredentials;
}

export type ChannelCredentials =
  | { readonly type: "insecure" }
  | {
      readonly type: "tls";
      /** Without a CA file the system roots are used. */
      readonly caCertificateFile?: string;
      readonly certificateFile?: string;
      readonly privateKeyFile?: string;
    };

export interface Locality {
  readonly region?: string;
  readonly zone?: string;
  readonly subZone?: string;
}

export interface DropStatsKey {
  readonly server: LrsServer;
  readonly clusterName: string;
  /** The cluster's EDS service name, when it has one (reported as `cluster_service_name`). */
  readonly edsServiceName?: string;
}

export interface LocalityStatsKey extends DropStatsKey {
  readonly locality: Locality;
  /** The cluster's `lrs_report_endpoint_metrics`, parsed; absent means unset (nothing propagated). */
  readonly propagation?: OrcaPropagationConfig;
}

/** Calls a cluster dropped before they reached any locality. */
export interface DropStats {
  /** A dropped call: by the EDS drop policy of `category`, or uncategorized (e.g. circuit breaking). */
  callDropped(category?: string): void;
  /** Stops recording; what was counted goes into the next report. Idempotent. */
  release(): void;
}

/** Which clusters the LRS server asked for. */
export interface ClusterSelection {
  readonly sendAllClusters: boolean;
  readonly clusters: ReadonlySet<string>;
}

export interface LoadReport {
  readonly clusterStats: ClusterStats[];
  /** True when no cluster (asked for or not) had anything to report. */
  readonly allZero: boolean;
}

export interface LoadStoreOptions {
  /** The A85 switch; default: `GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION` from `env`, else on. */
  readonly orcaLrsPropagation?: boolean;
  /** Default `process.env`, read once here. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** For `load_report_interval`. */
  readonly clock?: Clock;
}

export interface LoadStore {
  /** The A85 switch as resolved when the store was created. */
  readonly orcaLrsPropagation: boolean;
  /** A new handle for one locality of a cluster; release it when the locality goes away. */
  localityStats(key: LocalityStatsKey): LocalityStats;
  dropStats(key: DropStatsKey): DropStats;
  /**
   * The figures of one LRS server since its previous report, for the clusters selected, and starts a new interval
   * for every cluster (figures of clusters not selected are discarded, as the server did not ask for them).
   */
  takeReport(server: LrsServer, selection: ClusterSelection): LoadReport;
  /** True while the server has handles or unreported figures. */
  hasLoad(server: LrsServer): boolean;
}

interface LocalityEntry {
  readonly locality: Required<Locality>;
  readonly handles: Set<LocalityStatsImpl>;
  leftover: LocalitySnapshot | undefined;
}

interface ClusterEntry {
  readonly clusterName: string;
  readonly edsServiceName: string;
  readonly localities: Map<string, LocalityEntry>;
  readonly drops: Set<DropStatsImpl>;
  readonly droppedLeftover: DropCounts;
  lastReportAt: number;
}

interface DropCounts {
  uncategorized: number;
  readonly categories: Map<string, number>;
}

class DropStatsImpl implements DropStats {
  readonly counts: DropCounts = { uncategorized: 0, categories: new Map() };
  #released = false;
  readonly #onRelease: (stats: DropStatsImpl) => void;

  constructor(onRelease: (stats: DropStatsImpl) => void) {
    this.#onRelease = onRelease;
  }

  callDropped(category?: string): void {
    if (category === undefined || category === "") {
      this.counts.uncategorized++;
      return;
    }
    this.counts.categories.set(category, (this.counts.categories.get(category) ?? 0) + 1);
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#onRelease(this);
  }
}

export function serverKeyOf(server: LrsServer): string {
  return server.key ?? server.serverUri;
}

export function createLoadStore(options: LoadStoreOptions = {}): LoadStore {
  const switchOn = resolveOrcaLrsPropagation(options.orcaLrsPropagation, options.env);
  const clock = options.clock ?? systemClock;
  const servers = new Map<string, Map<string, ClusterEntry>>();

  function clusterEntry(key: DropStatsKey): ClusterEntry {
    if (typeof key.clusterName !== "string" || key.clusterName === "") {
      throw new TypeError("load stats: clusterName must be a non-empty string");
    }
    const serverKey = serverKeyOf(key.server);
    let clusters = servers.get(serverKey);
    if (clusters === undefined) {
      clusters = new Map();
      servers.set(serverKey, clusters);
    }
    const edsServiceName = key.edsServiceName ?? "";
    const id = `${key.clusterName}\u0000${edsServiceName}`;
    let entry = clusters.get(id);
    if (entry === undefined) {
      entry = {
        clusterName: key.clusterName,
        edsServiceName,
        localities: new Map(),
        drops: new Set(),
        droppedLeftover: { uncategorized: 0, categories: new Map() },
        lastReportAt: clock.now(),
      };
      clusters.set(id, entry);
    }
    return entry;
  }

  return {
    orcaLrsPropagation: switchOn,

    localityStats(key) {
      const cluster = clusterEntry(key);
      const locality = {
        region: key.locality.region ?? "",
        zone: key.locality.zone ?? "",
        subZone: key.locality.subZone ?? "",
      };
      const id = `${locality.region}\u0000${locality.zone}\u0000${locality.subZone}`;
      let entry = cluster.localities.get(id);
      if (entry === undefined) {
        entry = { locality, handles: new Set(), leftover: undefined };
        cluster.localities.set(id, entry);
      }
      const localityEntry = entry;
      // A released handle stays in `handles` (drained at each report) until its last call in flight finished.
      const stats = new LocalityStatsImpl(resolvePropagation(key.propagation, switchOn), (detached) => {
        localityEntry.leftover ??= emptySnapshot();
        detached.drainInto(localityEntry.leftover);
        localityEntry.handles.delete(detached);
      });
      entry.handles.add(stats);
      return stats;
    },

    dropStats(key) {
      const cluster = clusterEntry(key);
      const stats = new DropStatsImpl((released) => {
        addDrops(cluster.droppedLeftover, released.counts);
        cluster.drops.delete(released);
      });
      cluster.drops.add(stats);
      return stats;
    },

    takeReport(server, selection) {
      const serverKey = serverKeyOf(server);
      const clusters = servers.get(serverKey);
      const clusterStats: ClusterStats[] = [];
      let allZero = true;
      if (clusters === undefined) return { clusterStats, allZero };
      const now = clock.now();
      for (const [id, cluster] of clusters) {
        const localities: { locality: Required<Locality>; snapshot: LocalitySnapshot }[] = [];
        for (const [localityId, entry] of cluster.localities) {
          const snapshot = entry.leftover ?? emptySnapshot();
          entry.leftover = undefined;
          for (const handle of entry.handles) handle.drainInto(snapshot);
          if (!isZeroSnapshot(snapshot)) allZero = false;
          localities.push({ locality: entry.locality, snapshot });
          if (entry.handles.size === 0) cluster.localities.delete(localityId);
        }
        const drops: DropCounts = { uncategorized: 0, categories: new Map() };
        addDrops(drops, cluster.droppedLeftover);
        clearDrops(cluster.droppedLeftover);
        for (const handle of cluster.drops) {
          addDrops(drops, handle.counts);
          clearDrops(handle.counts);
        }
        if (drops.uncategorized > 0 || drops.categories.size > 0) allZero = false;
        const intervalMs = now - cluster.lastReportAt;
        cluster.lastReportAt = now;
        if (selection.sendAllClusters || selection.clusters.has(cluster.clusterName)) {
          clusterStats.push(toClusterStats(cluster, localities, drops, intervalMs));
        }
        if (cluster.localities.size === 0 && cluster.drops.size === 0) clusters.delete(id);
      }
      if (clusters.size === 0) servers.delete(serverKey);
      return { clusterStats, allZero };
    },

    hasLoad(server) {
      return servers.has(serverKeyOf(server));
    },
  };
}

function addDrops(into: DropCounts, from: DropCounts): void {
  into.uncategorized += from.uncategorized;
  for (const [category, count] of from.categories) {
    into.categories.set(category, (into.categories.get(category) ?? 0) + count);
  }
}

function clearDrops(counts: DropCounts): void {
  counts.uncategorized = 0;
  counts.categories.clear();
}

function toClusterStats(
  cluster: ClusterEntry,
  localities: readonly { locality: Required<Locality>; snapshot: LocalitySnapshot }[],
  drops: DropCounts,
  intervalMs: number,
): ClusterStats {
  let totalDropped = drops.uncategorized;
  for (const count of drops.categories.values()) totalDropped += count;
  return create(ClusterStatsSchema, {
    clusterName: cluster.clusterName,
    clusterServiceName: cluster.edsServiceName,
    upstreamLocalityStats: localities.map(({ locality, snapshot }) => toLocalityStats(locality, snapshot)),
    totalDroppedRequests: BigInt(totalDropped),
    droppedRequests: [...drops.categories]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([category, count]) => ({ category, droppedCount: BigInt(count) })),
    loadReportInterval: msToDuration(intervalMs),
  });
}

function toLocalityStats(locality: Required<Locality>, s: LocalitySnapshot): UpstreamLocalityStats {
  // A metric no call reported (count 0) is left out (docs/orca-lrs.md#zero-utilizations).
  const unnamed = (m: MetricTotal) =>
    m.count === 0 ? undefined : { numRequestsFinishedWithMetric: BigInt(m.count), totalMetricValue: m.total };
  return create(UpstreamLocalityStatsSchema, {
    locality,
    totalSuccessfulRequests: BigInt(s.succeeded),
    totalRequestsInProgress: BigInt(Math.max(0, s.inProgress)),
    totalErrorRequests: BigInt(s.errored),
    totalIssuedRequests: BigInt(s.issued),
    cpuUtilization: unnamed(s.cpuUtilization),
    memUtilization: unnamed(s.memUtilization),
    applicationUtilization: unnamed(s.applicationUtilization),
    loadMetricStats: [...s.named]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([metricName, m]) => ({
        metricName,
        numRequestsFinishedWithMetric: BigInt(m.count),
        totalMetricValue: m.total,
      })),
  });
}
