// @xdskit/opentelemetry: @xdskit/xds-client's A78 metrics as OpenTelemetry instruments.
export { createOpenTelemetryRecorder } from "./recorder.js";
export type { MetricLabels, OpenTelemetryRecorderOptions, XdsMetricsRecorder } from "./recorder.js";
export { XdsInstrumentName } from "./instruments.js";
export type { XdsCounterInstrument, XdsGaugeInstrument } from "./instruments.js";
