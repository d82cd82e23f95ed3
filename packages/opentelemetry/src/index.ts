// @xdskit/opentelemetry: @xdskit/xds-client's A78 metrics as OpenTelemetry instruments.
export { createOpenTelemetryRecorder } from "./recorder.js";
export type { MetricLabels, OpenTelemetryRecorderOptions, XdsMetricsRecorder } from "./recorder.js";
export { CallInstrumentName, LATENCY_BUCKETS, SIZE_BUCKETS, XdsInstrumentName } from "./instruments.js";
export type {
  CallCounterInstrument,
  CallHistogramInstrument,
  XdsCounterInstrument,
  XdsGaugeInstrument,
} from "./instruments.js";
