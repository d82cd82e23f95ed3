// An XdsMetricsRecorder (the interface @xdskit/xds-client takes as `metrics`) that records into OpenTelemetry.
// The interface is restated here, structurally identical, so this package depends on @opentelemetry/api alone.
import {
  type BatchObservableCallback,
  type Counter,
  type Histogram,
  type Meter,
  type MeterProvider,
  metrics,
  type Observable,
  ValueType,
} from "@opentelemetry/api";
import {
  CALL_COUNTERS,
  CALL_HISTOGRAMS,
  type CallCounterInstrument,
  type CallHistogramInstrument,
  COUNTERS,
  GAUGES,
  type XdsCounterInstrument,
  type XdsGaugeInstrument,
} from "./instruments.js";

export type MetricLabels = Readonly<Record<string, string>>;

/**
 * What `createXdsClient({ metrics })` takes, and `createXdsTransport({ metrics })` of `@xdskit/connect-xds` (its
 * A66 per-call counter and histograms).
 */
export interface XdsMetricsRecorder {
  addCounter(name: XdsCounterInstrument | CallCounterInstrument, value: number, labels: MetricLabels): void;
  recordHistogram(name: CallHistogramInstrument, value: number, labels: MetricLabels): void;
  registerGauges(
    collect: (record: (name: XdsGaugeInstrument, value: number, labels: MetricLabels) => void) => void,
  ): () => void;
}

export interface OpenTelemetryRecorderOptions {
  /** Where the instruments are created. Default: the global meter provider (`metrics.getMeterProvider()`). */
  readonly meterProvider?: MeterProvider;
  /** The instrumentation scope of the client's A78 instruments. Default `@xdskit/xds-client`. */
  readonly meterName?: string;
  /** The instrumentation scope of the A66 per-call instruments (`@xdskit/connect-xds` records them). */
  readonly callMeterName?: string;
}

/**
 * A metrics recorder for `createXdsClient({ metrics })` that turns the client's A78 counters into OpenTelemetry
 * counters and its gauges into observable gauges, read whenever the SDK collects. One recorder may serve several
 * clients (one per target): each client's gauges are reported with its own `grpc.target`.
 */
export function createOpenTelemetryRecorder(options: OpenTelemetryRecorderOptions = {}): XdsMetricsRecorder {
  const provider = options.meterProvider ?? metrics.getMeterProvider();
  const meter: Meter = provider.getMeter(options.meterName ?? "@xdskit/xds-client");
  const callMeter: Meter = provider.getMeter(options.callMeterName ?? "@xdskit/connect-xds");
  const counters = new Map<string, Counter>();
  for (const [name, { description, unit }] of Object.entries(COUNTERS)) {
    counters.set(name, meter.createCounter(name, { description, unit, valueType: ValueType.INT }));
  }
  for (const [name, { description, unit }] of Object.entries(CALL_COUNTERS)) {
    counters.set(name, callMeter.createCounter(name, { description, unit, valueType: ValueType.INT }));
  }
  const histograms = new Map<string, Histogram>();
  for (const [name, { description, unit, buckets }] of Object.entries(CALL_HISTOGRAMS)) {
    histograms.set(
      name,
      callMeter.createHistogram(name, {
        description,
        unit,
        valueType: unit === "By" ? ValueType.INT : ValueType.DOUBLE,
        advice: { explicitBucketBoundaries: [...buckets] },
      }),
    );
  }
  const gauges = new Map<string, Observable>();
  for (const [name, { description, unit }] of Object.entries(GAUGES)) {
    gauges.set(name, meter.createObservableGauge(name, { description, unit, valueType: ValueType.INT }));
  }
  const observables = [...gauges.values()];
  return {
    addCounter(name, value, labels) {
      counters.get(name)?.add(value, labels);
    },
    recordHistogram(name, value, labels) {
      histograms.get(name)?.record(value, labels);
    },
    registerGauges(collect) {
      const callback: BatchObservableCallback = (result) => {
        collect((name, value, labels) => {
          const gauge = gauges.get(name);
          if (gauge) result.observe(gauge, value, labels);
        });
      };
      meter.addBatchObservableCallback(callback, observables);
      return () => meter.removeBatchObservableCallback(callback, observables);
    },
  };
}
