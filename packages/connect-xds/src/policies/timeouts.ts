// A31: the deadline of a call routed by xDS is the earlier of the application's and the route's
// max_stream_duration (`grpc_timeout_header_max` first, else `max_stream_duration`, else the Listener's
// `common_http_protocol_options.max_stream_duration`; the config selector resolves that order). Zero means no
// limit from xDS. See docs/decisions.md#policies-timeouts.

/** The timeout to apply in ms (undefined: none), given the application's and the route's. */
export function effectiveTimeoutMs(
  applicationMs: number | undefined,
  maxStreamDurationMs: number | undefined,
): number | undefined {
  const route = maxStreamDurationMs === undefined || maxStreamDurationMs <= 0 ? undefined : maxStreamDurationMs;
  if (applicationMs === undefined) return route;
  if (route === undefined) return applicationMs;
  return Math.min(applicationMs, route);
}
