// @xdskit/xds-relay: a TP2 caching xDS relay. Grouped by audience (import sorting is off for this file).
export { createXdsRelay } from "./relay.js";
export type {
  RelayServerOptions,
  RelayStats,
  UpstreamHealthEvent,
  UpstreamState,
  UpstreamStreamInfo,
  XdsRelay,
  XdsRelayOptions,
} from "./relay.js";
export type { Logger, LogLevel } from "./logger.js";

// For people extending the relay: the resource type it relays with, and the status it refuses do_not_cache with
// (with `doNotCache: "refuse"`).
export { passThroughType } from "./pass-through-type.js";
export type { PassedResource } from "./pass-through-type.js";
export { DO_NOT_CACHE_CODE } from "./upstream.js";
