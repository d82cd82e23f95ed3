// A78 instruments. The client adds to counters as things happen and reports gauges when the recorder asks.

export const XdsMetricName = {
  resourceUpdatesValid: "grpc.xds_client.resource_updates_valid",
  resourceUpdatesInvalid: "grpc.xds_client.resource_updates_invalid",
  serverFailure: "grpc.xds_client.server_failure",
  connected: "grpc.xds_client.connected",
  resources: "grpc.xds_client.resources",
} as const;

export type XdsCounterName =
  | typeof XdsMetricName.resourceUpdatesValid
  | typeof XdsMetricName.resourceUpdatesInvalid
  | typeof XdsMetricName.serverFailure;
export type XdsGaugeName = typeof XdsMetricName.connected | typeof XdsMetricName.resources;

/** Labels as A78 names them: `grpc.target`, `grpc.xds.server`, `grpc.xds.resource_type`, `grpc.xds.authority`, `grpc.xds.cache_state`. */
export type MetricLabels = Readonly<Record<string, string>>;

export interface XdsMetricsRecorder {
  addCounter(name: XdsCounterName, value: number, labels: MetricLabels): void;
  /**
   * Called once with a function that reports every gauge's current values; the recorder calls it whenever it
   * collects. The returned function unregisters (the client calls it on close).
   */
  registerGauges?(
    collect: (record: (name: XdsGaugeName, value: number, labels: MetricLabels) => void) => void,
  ): () => void;
}

export const noopMetrics: XdsMetricsRecorder = { addCounter: () => {} };
