// A66 per-call instruments with A78's optional `grpc.lb.locality` label, recorded through the same recorder shape
// @xdskit/xds-client takes (`@xdskit/opentelemetry`'s recorder implements both).

export const CallMetricName = {
  attemptStarted: "grpc.client.attempt.started",
  attemptDuration: "grpc.client.attempt.duration",
  attemptSentMessageSize: "grpc.client.attempt.sent_total_compressed_message_size",
  attemptRcvdMessageSize: "grpc.client.attempt.rcvd_total_compressed_message_size",
  callDuration: "grpc.client.call.duration",
} as const;

export type CallCounterName = typeof CallMetricName.attemptStarted;
export type CallHistogramName =
  | typeof CallMetricName.attemptDuration
  | typeof CallMetricName.attemptSentMessageSize
  | typeof CallMetricName.attemptRcvdMessageSize
  | typeof CallMetricName.callDuration;

export type MetricLabels = Readonly<Record<string, string>>;

/**
 * Where per-call metrics go. Durations are in seconds, sizes in bytes (A66). Labels: `grpc.method`
 * (`package.Service/Method`), `grpc.target`, `grpc.status` (`OK`, `UNAVAILABLE`, ...; not on `attempt.started`),
 * and `grpc.lb.locality` on attempts that reached an endpoint of an EDS locality.
 */
export interface CallMetricsRecorder {
  addCounter(name: CallCounterName, value: number, labels: MetricLabels): void;
  /** Without it, only the counter is recorded. */
  recordHistogram?(name: CallHistogramName, value: number, labels: MetricLabels): void;
}

const CODE_NAMES = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
];

/** The `grpc.status` value of a code. */
export function statusName(code: number): string {
  return CODE_NAMES[code] ?? "UNKNOWN";
}
