// @xdskit/orca-lrs-bridge: ORCA backend metrics in, LRS load reports out (gRFC A51, A64, A85).
// Grouped by audience (import sorting is off for this file). The @grpc/grpc-js interceptors are in the
// `@xdskit/orca-lrs-bridge/grpc-js` entry point.

// Clients: count calls per locality and report them to the cluster's LRS server.
export { createLrsClient, SEND_ALL_CLUSTERS_FEATURE } from "./lrs-client.js";
export type { LrsClient, LrsClientOptions, LrsNode } from "./lrs-client.js";
export type {
  ChannelCredentials,
  DropStats,
  DropStatsKey,
  Locality,
  LocalityStatsKey,
  LrsServer,
} from "./load-store.js";
export type { CallOutcome, LocalityStats, OrcaMetrics } from "./locality-stats.js";
export {
  ORCA_LRS_PROPAGATION_ENV,
  parseLrsReportEndpointMetrics,
  resolveOrcaLrsPropagation,
} from "./propagation.js";
export type { OrcaPropagationConfig, OrcaPropagationSelection } from "./propagation.js";

// Clients: read ORCA reports (per call from trailers, and out of band).
export { loadReportingInterceptor, orcaClientInterceptor } from "./connect-client.js";
export type { LoadReportingInterceptorOptions, OrcaClientInterceptorOptions } from "./connect-client.js";
export { createOrcaOobClient } from "./oob-client.js";
export type { OrcaOobClient, OrcaOobClientOptions, OrcaOobListener, OrcaOobState } from "./oob-client.js";
export {
  ORCA_BIN_TRAILER,
  ORCA_JSON_TRAILER,
  ORCA_NATIVE_TRAILER,
  readOrcaReport,
  readOrcaReportFromHeaders,
} from "./orca-trailers.js";
export type { OrcaReadResult, TrailerValues } from "./orca-trailers.js";
export { decodeOrcaBinaryTrailer, decodeOrcaLoadReport } from "./orca-bin.js";
export { parseOrcaJson, parseOrcaNative } from "./orca-text.js";
export { OrcaParseError } from "./orca-error.js";
export type { OrcaTrailerFormat } from "./orca-error.js";

// Backends: record ORCA metrics per call and per server, serve them in trailers and out of band.
export { orcaCallRecorder, orcaServerInterceptor } from "./connect-server.js";
export type { OrcaServerInterceptorOptions } from "./connect-server.js";
export { createServerMetricRecorder } from "./metric-recorder.js";
export type { CallMetricRecorder, ServerMetricRecorder } from "./metric-recorder.js";
export { orcaServiceRoutes } from "./orca-service.js";
export type { OrcaServiceOptions } from "./orca-service.js";

// For people bringing their own LRS transport or measuring: the load store, time and logging.
export { createLoadStore } from "./load-store.js";
export type { ClusterSelection, LoadReport, LoadStore, LoadStoreOptions } from "./load-store.js";
export { createBackoff, systemClock } from "./clock.js";
export type { Backoff, BackoffOptions, Clock } from "./clock.js";
export { noopLogger } from "./logger.js";
export type { Logger, LogLevel } from "./logger.js";
