// A78's xDS client instruments: names, units and label keys as gRPC registers them; descriptions in our words.

/** The five A78 instrument names, and xdskit's count of ambiguous TP2 variant matches. */
export const XdsInstrumentName = {
  connected: "grpc.xds_client.connected",
  serverFailure: "grpc.xds_client.server_failure",
  resourceUpdatesValid: "grpc.xds_client.resource_updates_valid",
  resourceUpdatesInvalid: "grpc.xds_client.resource_updates_invalid",
  resources: "grpc.xds_client.resources",
  resourceVariantsAmbiguous: "grpc.xds_client.resource_variants_ambiguous",
} as const;

export type XdsCounterInstrument =
  | typeof XdsInstrumentName.serverFailure
  | typeof XdsInstrumentName.resourceUpdatesValid
  | typeof XdsInstrumentName.resourceUpdatesInvalid
  | typeof XdsInstrumentName.resourceVariantsAmbiguous;
export type XdsGaugeInstrument = typeof XdsInstrumentName.connected | typeof XdsInstrumentName.resources;

export interface InstrumentSpec {
  readonly description: string;
  readonly unit: string;
  /** The label keys the client attaches (A78). */
  readonly labels: readonly string[];
}

export const COUNTERS: Readonly<Record<XdsCounterInstrument, InstrumentSpec>> = {
  [XdsInstrumentName.serverFailure]: {
    description:
      "EXPERIMENTAL. Times an xDS server went from healthy to unhealthy: a connectivity failure, or an ADS stream " +
      "that ended before any response (gRFC A57).",
    unit: "{failure}",
    labels: ["grpc.target", "grpc.xds.server"],
  },
  [XdsInstrumentName.resourceUpdatesValid]: {
    description: "EXPERIMENTAL. Resources received and accepted, counted even when unchanged.",
    unit: "{resource}",
    labels: ["grpc.target", "grpc.xds.server", "grpc.xds.resource_type"],
  },
  [XdsInstrumentName.resourceUpdatesInvalid]: {
    description: "EXPERIMENTAL. Resources received and rejected as invalid.",
    unit: "{resource}",
    labels: ["grpc.target", "grpc.xds.server", "grpc.xds.resource_type"],
  },
  [XdsInstrumentName.resourceVariantsAmbiguous]: {
    description:
      "EXPERIMENTAL (xdskit, not A78). Subscriptions that several TP2 variants of one resource matched; the client " +
      "used the most specific one.",
    unit: "{resource}",
    labels: ["grpc.target", "grpc.xds.server", "grpc.xds.resource_type"],
  },
};

export const GAUGES: Readonly<Record<XdsGaugeInstrument, InstrumentSpec>> = {
  [XdsInstrumentName.connected]: {
    description:
      "EXPERIMENTAL. 1 while the client has a working ADS stream to the xDS server (from its first response), 0 " +
      "after a connectivity failure or a stream that ended before any response (gRFC A57).",
    unit: "{bool}",
    labels: ["grpc.target", "grpc.xds.server"],
  },
  [XdsInstrumentName.resources]: {
    description: "EXPERIMENTAL. xDS resources in the client's cache, by authority, type and cache state.",
    unit: "{resource}",
    /** Plus `grpc.xds.dynamic_parameters` on subscriptions with TP2 parameters (xdskit, not A78). */
    labels: ["grpc.target", "grpc.xds.authority", "grpc.xds.resource_type", "grpc.xds.cache_state"],
  },
};

/** A66's client per-call instruments, which `@xdskit/connect-xds` records (with A78's optional `grpc.lb.locality`). */
export const CallInstrumentName = {
  attemptStarted: "grpc.client.attempt.started",
  attemptDuration: "grpc.client.attempt.duration",
  attemptSentMessageSize: "grpc.client.attempt.sent_total_compressed_message_size",
  attemptRcvdMessageSize: "grpc.client.attempt.rcvd_total_compressed_message_size",
  callDuration: "grpc.client.call.duration",
} as const;

export type CallCounterInstrument = typeof CallInstrumentName.attemptStarted;
export type CallHistogramInstrument =
  | typeof CallInstrumentName.attemptDuration
  | typeof CallInstrumentName.attemptSentMessageSize
  | typeof CallInstrumentName.attemptRcvdMessageSize
  | typeof CallInstrumentName.callDuration;

export interface HistogramSpec extends InstrumentSpec {
  /** A66's default buckets, given to the SDK as advice. */
  readonly buckets: readonly number[];
}

/** A66 latency buckets, in seconds. */
export const LATENCY_BUCKETS: readonly number[] = [
  0, 0.00001, 0.00005, 0.0001, 0.0003, 0.0006, 0.0008, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.008, 0.01, 0.013,
  0.016, 0.02, 0.025, 0.03, 0.04, 0.05, 0.065, 0.08, 0.1, 0.13, 0.16, 0.2, 0.25, 0.3, 0.4, 0.5, 0.65, 0.8, 1, 2, 5, 10,
  20, 50, 100,
];

/** A66 size buckets, in bytes. */
export const SIZE_BUCKETS: readonly number[] = [
  0, 1024, 2048, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456, 1073741824, 4294967296,
];

const ATTEMPT_LABELS = ["grpc.method", "grpc.target", "grpc.status", "grpc.lb.locality"];

export const CALL_COUNTERS: Readonly<Record<CallCounterInstrument, InstrumentSpec>> = {
  [CallInstrumentName.attemptStarted]: {
    description: "Call attempts started, including those not yet completed (gRFC A66).",
    unit: "{attempt}",
    labels: ["grpc.method", "grpc.target"],
  },
};

export const CALL_HISTOGRAMS: Readonly<Record<CallHistogramInstrument, HistogramSpec>> = {
  [CallInstrumentName.attemptDuration]: {
    description: "Time from the start of a call attempt, its load-balancing pick included, to its end (gRFC A66).",
    unit: "s",
    labels: ATTEMPT_LABELS,
    buckets: LATENCY_BUCKETS,
  },
  [CallInstrumentName.attemptSentMessageSize]: {
    description: "Compressed bytes of the request messages of an attempt, gRPC framing excluded (gRFC A66).",
    unit: "By",
    labels: ATTEMPT_LABELS,
    buckets: SIZE_BUCKETS,
  },
  [CallInstrumentName.attemptRcvdMessageSize]: {
    description: "Compressed bytes of the response messages of an attempt, gRPC framing excluded (gRFC A66).",
    unit: "By",
    labels: ATTEMPT_LABELS,
    buckets: SIZE_BUCKETS,
  },
  [CallInstrumentName.callDuration]: {
    description: "Time from the start of a call to its status reaching the application (gRFC A66).",
    unit: "s",
    labels: ["grpc.method", "grpc.target", "grpc.status"],
    buckets: LATENCY_BUCKETS,
  },
};
