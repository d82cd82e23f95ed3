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
