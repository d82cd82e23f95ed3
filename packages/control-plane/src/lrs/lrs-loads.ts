// The loads a control plane feeds back into its decisions (e.g. locality weights): a cluster's latest report from
// one node, per locality, with sums and means of its ORCA metrics.
import type { ClusterStats } from "@xdskit/protos/envoy/config/endpoint/v3/load_report_pb";

/** One metric over a report's interval: the sum, how many calls reported it, and their mean. */
export interface MetricLoad {
  readonly total: number;
  readonly count: number;
  readonly mean: number;
}

export interface LocalityLoad {
  readonly region: string;
  readonly zone: string;
  readonly subZone: string;
  readonly issued: number;
  readonly succeeded: number;
  readonly errors: number;
  readonly inProgress: number;
  /** Present when the report carried the top-level field (A85). */
  readonly cpuUtilization?: MetricLoad;
  readonly memUtilization?: MetricLoad;
  readonly applicationUtilization?: MetricLoad;
  /** `load_metric_stats` by `metric_name` (`named_metrics.<key>` from A85 clients). */
  readonly metrics: Readonly<Record<string, MetricLoad>>;
}

export interface ClusterLoad {
  readonly nodeId: string;
  readonly clusterName: string;
  /** The EDS service name the client reported (`cluster_service_name`), often empty. */
  readonly clusterServiceName: string;
  /** `load_report_interval`: the time the figures cover. */
  readonly intervalMs: number;
  /** `Date.now()` when the report arrived. */
  readonly receivedAt: number;
  readonly localities: readonly LocalityLoad[];
  readonly totalDropped: number;
  readonly droppedByCategory: Readonly<Record<string, number>>;
}

function metric(total: number, count: bigint): MetricLoad {
  const n = Number(count);
  return { total, count: n, mean: n === 0 ? 0 : total / n };
}

/** A cluster's stats from one report as plain numbers. */
export function toClusterLoad(nodeId: string, stats: ClusterStats, receivedAt: number): ClusterLoad {
  const interval = stats.loadReportInterval;
  return {
    nodeId,
    clusterName: stats.clusterName,
    clusterServiceName: stats.clusterServiceName,
    intervalMs: interval === undefined ? 0 : Number(interval.seconds) * 1000 + interval.nanos / 1e6,
    receivedAt,
    localities: stats.upstreamLocalityStats.map((l) => ({
      region: l.locality?.region ?? "",
      zone: l.locality?.zone ?? "",
      subZone: l.locality?.subZone ?? "",
      issued: Number(l.totalIssuedRequests),
      succeeded: Number(l.totalSuccessfulRequests),
      errors: Number(l.totalErrorRequests),
      inProgress: Number(l.totalRequestsInProgress),
      ...(l.cpuUtilization
        ? { cpuUtilization: metric(l.cpuUtilization.totalMetricValue, l.cpuUtilization.numRequestsFinishedWithMetric) }
        : {}),
      ...(l.memUtilization
        ? { memUtilization: metric(l.memUtilization.totalMetricValue, l.memUtilization.numRequestsFinishedWithMetric) }
        : {}),
      ...(l.applicationUtilization
        ? {
            applicationUtilization: metric(
              l.applicationUtilization.totalMetricValue,
              l.applicationUtilization.numRequestsFinishedWithMetric,
            ),
          }
        : {}),
      metrics: Object.fromEntries(
        l.loadMetricStats.map((m) => [m.metricName, metric(m.totalMetricValue, m.numRequestsFinishedWithMetric)]),
      ),
    })),
    totalDropped: Number(stats.totalDroppedRequests),
    droppedByCategory: Object.fromEntries(stats.droppedRequests.map((d) => [d.category, Number(d.droppedCount)])),
  };
}

/** A plain-text table of cluster loads, one row per locality and metric, for people. */
export function formatClusterLoads(loads: readonly ClusterLoad[]): string {
  const rows: string[][] = [
    ["node", "cluster", "locality", "issued", "ok", "errors", "in progress", "metric", "mean", "calls"],
  ];
  for (const load of loads) {
    for (const l of load.localities) {
      const locality = [l.region, l.zone, l.subZone].filter((part) => part !== "").join("/") || "(none)";
      const base = [
        load.nodeId,
        load.clusterName,
        locality,
        String(l.issued),
        String(l.succeeded),
        String(l.errors),
        String(l.inProgress),
      ];
      const metrics: [string, MetricLoad][] = [];
      if (l.cpuUtilization) metrics.push(["cpu_utilization", l.cpuUtilization]);
      if (l.memUtilization) metrics.push(["mem_utilization", l.memUtilization]);
      if (l.applicationUtilization) metrics.push(["application_utilization", l.applicationUtilization]);
      for (const name of Object.keys(l.metrics).sort()) metrics.push([name, l.metrics[name] as MetricLoad]);
      if (metrics.length === 0) rows.push([...base, "", "", ""]);
      metrics.forEach(([name, m], i) => {
        rows.push([...(i === 0 ? base : base.map(() => "")), name, formatNumber(m.mean), String(m.count)]);
      });
    }
    if (load.totalDropped > 0) {
      const categories = Object.entries(load.droppedByCategory).map(([c, n]) => `${c}=${n}`);
      rows.push([
        load.nodeId,
        load.clusterName,
        `dropped ${load.totalDropped}`,
        categories.join(" "),
        "",
        "",
        "",
        "",
        "",
        "",
      ]);
    }
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

function formatNumber(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(3);
}
