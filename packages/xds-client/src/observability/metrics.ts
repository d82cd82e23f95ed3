// A78 instruments. The client adds to counters as things happen and reports gauges when the recorder asks.

export const XdsMetricName = {
  resourceUpdatesValid: "grpc.xds_client.resource_updates_valid",
  resourceUpdatesInvalid: "grpc.xds_client.resource_updates_invalid",
  serverFailure: "grpc.xds_client.server_failure",
  /** Not A78: subscriptions that several TP2 variants of one response matched (docs/decisions.md#ambiguous-variants). */
  resourceVariantsAmbiguous: "grpc.xds_client.resource_variants_ambiguous",
  connected: "grpc.xds_client.connected",
  resources: "grpc.xds_client.resources",
} as const;

export type XdsCounterName =
  | typeof XdsMetricName.resourceUpdatesValid
  | typeof XdsMetricName.resourceUpdatesInvalid
  | typeof XdsMetricName.serverFailure
  | typeof XdsMetricName.resourceVariantsAmbiguous;
export type XdsGaugeName = typeof XdsMetricName.connected | typeof XdsMetricName.resources;

/**
 * Labels as A78 names them: `grpc.target`, `grpc.xds.server`, `grpc.xds.resource_type` (the message type without
 * the `type.googleapis.com/` prefix, e.g. `envoy.config.listener.v3.Listener`), `grpc.xds.authority`,
 * `grpc.xds.cache_state`; and, on `resources` for a subscription with TP2 parameters only, the optional
 * `grpc.xds.dynamic_parameters` (docs/decisions.md#variants-in-csds-and-metrics).
 */
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

/** The A78 `grpc.xds.resource_type` value of a type URL: the message type, without the `type.googleapis.com/` prefix. */
export function metricResourceType(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf("/") + 1);
}
