// What `xdskit serve` prints about the load reports it receives (clusters with `lrs_server: self` report to it):
// with --verbose one line per report on stderr; with --loads a table per report on stdout (calls, errors, drops and
// ORCA means per cluster and locality); with --loads-json one JSON object per report on stdout.
import {
  type ClusterLoad,
  formatClusterLoads,
  type LoadReportEvent,
  type ManagementServer,
} from "@xdskit/control-plane";
import type { CliIo } from "./command.js";

export interface LoadsOutput {
  /** One line per report on stderr (--verbose). */
  readonly verbose: boolean;
  readonly table: boolean;
  readonly json: boolean;
}

function sum(loads: readonly ClusterLoad[], pick: (load: ClusterLoad) => number): number {
  return loads.reduce((total, load) => total + pick(load), 0);
}

/** `node web-1, 2 clusters: 40 calls, 1 error, 0 dropped over 10.0 s`. */
export function describeReport(event: LoadReportEvent): string {
  const loads = event.loads;
  const calls = sum(loads, (l) => l.localities.reduce((n, x) => n + x.issued, 0));
  const errors = sum(loads, (l) => l.localities.reduce((n, x) => n + x.errors, 0));
  const dropped = sum(loads, (l) => l.totalDropped);
  const seconds = (Math.max(0, ...loads.map((l) => l.intervalMs)) / 1000).toFixed(1);
  const clusters = loads.map((l) => l.clusterName).join(", ");
  return (
    `load report [stream ${event.streamId}, node ${event.nodeId || "(no id)"}] ${clusters || "(no cluster)"}: ` +
    `${calls} calls, ${errors} errors, ${dropped} dropped over ${seconds} s`
  );
}

/** The JSON form of one report: `{time, streamId, node, clusters: [ClusterLoad...]}`. */
export function reportJson(event: LoadReportEvent): string {
  return JSON.stringify({
    time: new Date(event.receivedAt).toISOString(),
    streamId: event.streamId,
    node: event.nodeId,
    clusters: event.loads,
  });
}

/** Prints each report `server` receives as `output` asks; returns the function that stops. */
export function logLoads(io: CliIo, server: ManagementServer, output: LoadsOutput): () => void {
  if (!output.verbose && !output.table && !output.json) return () => {};
  return server.lrs.onReport((event) => {
    const time = new Date(event.receivedAt).toISOString();
    if (output.verbose) io.stderr(`${time} ${describeReport(event)}\n`);
    if (event.loads.length === 0) return;
    if (output.json) io.stdout(`${reportJson(event)}\n`);
    if (output.table) {
      io.stdout(`${time} loads from node ${event.nodeId || "(no id)"}:\n`);
      io.stdout(`${formatClusterLoads(event.loads).replace(/^/gm, "  ")}\n`);
    }
  });
}
