// What createXdsTransport takes and returns, and the internals tests set (time, randomness, DNS, the call variant).
import type { Interceptor, Transport } from "@connectrpc/connect";
import type { Clock } from "@xdskit/orca-lrs-bridge";
import type { BootstrapConfig, ClusterUpdate, Logger, ResourceType, XdsClient } from "@xdskit/xds-client";
import type { LbPolicyRegistry } from "../balancer/lb-registry.js";
import type { CallMetricsRecorder } from "../call/metrics.js";
import type { DnsLookup } from "../clusters/logical-dns.js";
import type { EndpointTransportOptions, KeepaliveOptions } from "../connections/transport-options.js";
import type { FallbackCredentials } from "../credentials/fallback-credentials.js";
import type { RetryBufferLimits } from "../policies/retry-buffer.js";
import type { RetryThrottleConfig } from "../policies/retry-throttle.js";

export interface XdsTransportOptions extends EndpointTransportOptions, KeepaliveOptions {
  /** `xds:///name` or `xds://authority/name` (A47). */
  readonly target: string;
  /** The xDS client to watch through (any `XdsClient`, e.g. one wrapped by `withDynamicParameters`). Not closed by `close()`. */
  readonly client?: XdsClient;
  /** Without `client`: the bootstrap of the client the transport makes (and closes); default `GRPC_XDS_BOOTSTRAP`. */
  readonly bootstrap?: BootstrapConfig | string;
  /** LB policies by name and xDS type (A52). Default: round_robin, pick_first, wrr_locality, weighted_target, priority. */
  readonly lbPolicies?: LbPolicyRegistry;
  /** A66 per-call metrics (and, for a client the transport makes, the client's A78 metrics). */
  readonly metrics?: CallMetricsRecorder;
  /** Count calls and report them to clusters' LRS servers (A64, A85). Default true. */
  readonly loadReporting?: boolean;
  /** Applies to calls without their own timeout (as connect-node's `defaultTimeoutMs`). */
  readonly defaultTimeoutMs?: number;
  /** gRPC retry throttling (A6) for the retries xDS routes configure (A44); none by default, as in gRPC. */
  readonly retryThrottling?: RetryThrottleConfig;
  /**
   * A6 retry buffer limits: the request bytes one call may hold for its retries (`perCallBytes`, default 256 KiB)
   * and all calls of the transport together (`totalBytes`, default 16 MiB). A call over either is not retried.
   */
  readonly retryBufferLimits?: RetryBufferLimits;
  /**
   * Default false: an attempt whose server sent response headers is committed and not retried (A6), as in every gRPC
   * client. `true`: a unary attempt stays retryable until a response message arrives, for backends that send
   * headers before every error (connect-node servers never answer Trailers-Only); the server may then have run the
   * call before it is retried. Streaming calls are committed by headers either way.
   */
  readonly retryAfterResponseHeaders?: boolean;
  /**
   * A9: after this long without a call in flight, the transport's backend connections close; the next call
   * connects again. Default 30 minutes (gRPC's); `Infinity`: never.
   */
  readonly idleTimeoutMs?: number;
  /**
   * A29: how the backends of a cluster without an UpstreamTlsContext are reached. Default `{ type: "insecure" }`
   * (gRPC's xDS credentials with an insecure fallback); a cluster's UpstreamTlsContext always wins.
   */
  readonly fallbackCredentials?: FallbackCredentials;
  /**
   * Connect interceptors around each call (as connect-node's `createGrpcTransport` takes them), the first outermost.
   * They run before routing: a header they set is matched by routes and sent on every attempt.
   */
  readonly interceptors?: readonly Interceptor[];
  readonly logger?: Logger;
}

export interface XdsTransport extends Transport {
  readonly target: string;
  /**
   * The xDS client the transport watches through: the `client` option, or the one it made from `bootstrap`. For CSDS
   * (`@xdskit/csds`: `registry.add(transport.xdsClient)`) and diagnostics (`dumpResources()`). A client the transport
   * made is closed by `close()`: do not close it yourself.
   */
  readonly xdsClient: XdsClient;
  /**
   * Stops watching, fails waiting calls UNAVAILABLE, closes an owned client, and ends every connection it opened:
   * at once when connecting, once their calls end otherwise (calls a server's SETTINGS_MAX_CONCURRENT_STREAMS keeps
   * queued fail UNAVAILABLE).
   */
  close(): Promise<void>;
}

/** Time and randomness, for tests. */
export interface XdsTransportInternals {
  readonly clock?: Clock;
  readonly random?: () => number;
  readonly minConnectTimeoutMs?: number;
  readonly clusterType?: ResourceType<ClusterUpdate>;
  /** LOGICAL_DNS resolution: the lookup and the minimum time between two resolutions. */
  readonly dns?: { readonly lookup?: DnsLookup; readonly minIntervalMs?: number };
  /** `"connect"`: unary calls and server streams through connect's gRPC transport instead of the lean calls. */
  readonly unaryCalls?: "lean" | "connect";
  /** The least keepalive time accepted (default 10 s, as grpc-go and grpc-java). */
  readonly minKeepaliveTimeMs?: number;
}
