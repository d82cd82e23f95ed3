// createXdsTransport: a Connect Transport for an `xds:` target. It wires the resolver, the cluster manager, the
// subchannel pool and the call path together (docs/architecture.md#connect-xds-the-call-path).
import type { DescMessage, DescMethodStreaming, DescMethodUnary, MessageInitShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  type Interceptor,
  type StreamResponse,
  type Transport,
  type UnaryResponse,
} from "@connectrpc/connect";
import { type Clock, type LrsClient, systemClock } from "@xdskit/orca-lrs-bridge";
import {
  type BootstrapConfig,
  type ClusterUpdate,
  createClusterResourceType,
  createXdsClient,
  type Logger,
  type ResourceType,
  type XdsClient,
  type XdsMetricsRecorder,
} from "@xdskit/xds-client";
import { loggerFromEnvironment } from "@xdskit/xds-client/internal";
import type { ConfigSelector } from "../balancer/config-selector.js";
import type { LbMetrics } from "../balancer/lb-policy.js";
import { createLbPolicyRegistry, type LbPolicyRegistry } from "../balancer/lb-registry.js";
import { runCall } from "../call/call.js";
import { endStream, endUnary } from "../call/call-attempt.js";
import type { CallContext, CallState } from "../call/call-context.js";
import type { CallMetricsRecorder } from "../call/metrics.js";
import { createRequestReplay, type RequestReplay } from "../call/request-replay.js";
import { type ClusterEntry, createClusterManager } from "../clusters/cluster-manager.js";
import type { DnsLookup } from "../clusters/logical-dns.js";
import { resolveKeepalive } from "../connections/keepalive.js";
import type { EndpointTransportOptions, KeepaliveOptions } from "../connections/transport-options.js";
import type { FallbackCredentials } from "../credentials/fallback-credentials.js";
import { createClusterSecurity } from "../credentials/upstream-tls.js";
import { builtinLbPolicies } from "../policies/index.js";
import { createRetryBufferPool, type RetryBufferLimits } from "../policies/retry-buffer.js";
import { createRetryThrottle, type RetryThrottleConfig } from "../policies/retry-throttle.js";
import { startXdsResolver } from "../resolver/xds-resolver.js";
import { createUniform, intDraw } from "../shared/random.js";
import { createWorkSerializer } from "../shared/work-serializer.js";
import { ambientErrorLogger } from "../shared/xds-errors.js";
import { createEndpointSubchannel, type EndpointSubchannelBase } from "../subchannels/endpoint-subchannel.js";
import { createSubchannelPool } from "../subchannels/subchannel-pool.js";
import { createIdleTracker, resolveIdleTimeout } from "./idle.js";
import { withInterceptors } from "./interceptors.js";
import { acquireLrs, releaseLrs } from "./shared-lrs.js";
import { parseXdsTarget } from "./target.js";

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

/** The `load_balancing_policy` types xds-client converts itself; any other type a registry has is a custom policy. */
const CONVERTED_TYPES = new Set([
  "envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin",
  "envoy.extensions.load_balancing_policies.ring_hash.v3.RingHash",
  "envoy.extensions.load_balancing_policies.wrr_locality.v3.WrrLocality",
  "envoy.extensions.load_balancing_policies.pick_first.v3.PickFirst",
  "envoy.extensions.load_balancing_policies.least_request.v3.LeastRequest",
  "envoy.extensions.load_balancing_policies.client_side_weighted_round_robin.v3.ClientSideWeightedRoundRobin",
]);

/**
 * The CDS type the transport watches with: the built-in one, or one that accepts the registry's custom policies
 * (TypedStruct in `load_balancing_policy`, A52). A client decodes a type URL with the first type registered for it.
 */
function clusterTypeFor(registry: LbPolicyRegistry): ResourceType<ClusterUpdate> | undefined {
  const custom = registry
    .list()
    .flatMap((factory) => factory.typeNames)
    .filter((type) => !CONVERTED_TYPES.has(type));
  return custom.length === 0 ? undefined : createClusterResourceType({ customLbPolicies: custom });
}

/** `package.Service/Method` of each method descriptor, built once (the call path and metrics use it per call). */
const methodNames = new WeakMap<object, string>();

function methodName(method: { readonly parent: { readonly typeName: string }; readonly name: string }): string {
  let name = methodNames.get(method);
  if (name === undefined) {
    name = `${method.parent.typeName}/${method.name}`;
    methodNames.set(method, name);
  }
  return name;
}

const noopLogger: Logger = { error() {}, warn() {}, info() {}, debug() {}, isEnabled: () => false };

export function createXdsTransport(options: XdsTransportOptions): XdsTransport {
  return createXdsTransportWithInternals(options, {});
}

export function createXdsTransportWithInternals(
  options: XdsTransportOptions,
  internals: XdsTransportInternals,
): XdsTransport {
  // An explicit logger serves the transport and what it makes; otherwise each reads its own from the environment.
  const logger: Logger = options.logger ?? loggerFromEnvironment("connect-xds") ?? noopLogger;
  // Bad limits throw here, before a client is made.
  const retryBuffer = createRetryBufferPool(options.retryBufferLimits);
  const keepalive = resolveKeepalive(options, internals.minKeepaliveTimeMs);
  const idleTimeoutMs = resolveIdleTimeout(options.idleTimeoutMs);
  const ownsClient = options.client === undefined;
  const client =
    options.client ??
    createXdsClient({
      ...(options.bootstrap === undefined ? {} : { bootstrap: options.bootstrap }),
      target: options.target,
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.metrics === undefined ? {} : { metrics: options.metrics as unknown as XdsMetricsRecorder }),
    });
  let target: ReturnType<typeof parseXdsTarget>;
  try {
    target = parseXdsTarget(options.target, client.bootstrap);
  } catch (error) {
    if (ownsClient) void client.close();
    throw error;
  }
  const clock = internals.clock ?? systemClock;
  const random = internals.random ?? createUniform();
  const serializer = createWorkSerializer((error) =>
    logger.error(
      `[connect-xds ${options.target}] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    ),
  );
  const registry = options.lbPolicies ?? createLbPolicyRegistry(builtinLbPolicies);
  const security = createClusterSecurity({
    bootstrap: client.bootstrap,
    logger,
    ...(options.fallbackCredentials === undefined ? {} : { fallback: options.fallbackCredentials }),
  });
  const pool = createSubchannelPool({
    clock,
    random,
    serializer,
    logger,
    transportOptions: internals.unaryCalls === undefined ? options : { ...options, unaryCalls: internals.unaryCalls },
    ...(internals.minConnectTimeoutMs === undefined ? {} : { minConnectTimeoutMs: internals.minConnectTimeoutMs }),
    ...(keepalive === undefined ? {} : { keepalive }),
  });
  const metrics = options.metrics;
  const lbMetrics: LbMetrics = {
    addCounter: (name, value, labels) =>
      (metrics as { addCounter(n: string, v: number, l: object): void } | undefined)?.addCounter(name, value, labels),
    recordHistogram: (name, value, labels) =>
      (metrics as { recordHistogram?(n: string, v: number, l: object): void } | undefined)?.recordHistogram?.(
        name,
        value,
        labels,
      ),
  };
  let lrs: LrsClient | undefined;
  const loadReporting = options.loadReporting ?? true;

  // Calls waiting for a change (config, any cluster's picker).
  let listeners: (() => void)[] = [];
  const notify = () => {
    if (listeners.length === 0) return;
    const current = listeners;
    listeners = [];
    for (const listener of current) listener();
  };

  const base: EndpointSubchannelBase = {
    createSubchannel: (address, endpoint) => pool.acquire(address, endpoint),
    registry,
    logger,
    clock,
    random,
    randomInt: intDraw(random),
    target: options.target,
    metrics: lbMetrics,
  };
  const clusterType = internals.clusterType ?? clusterTypeFor(registry);
  const manager = createClusterManager({
    client,
    ...(clusterType === undefined ? {} : { clusterType }),
    serializer,
    helper: {
      ...base,
      createEndpointSubchannel: (endpoint) => createEndpointSubchannel(endpoint, base, serializer),
      requestReresolution: () => {},
    },
    security: (config) => security.securityFor(config),
    lrs: () => {
      if (!loadReporting || closed !== undefined) return undefined;
      lrs ??= acquireLrs(client, options.logger);
      return lrs;
    },
    onPicker: notify,
    ...(internals.dns === undefined ? {} : { dns: internals.dns }),
  });

  let selector: ConfigSelector | ConnectError | undefined;
  let clusters = new Map<string, ClusterEntry>();
  let closed: ConnectError | undefined;

  const state: CallState = {
    get selector() {
      return selector;
    },
    get clusters() {
      return clusters;
    },
    get closed() {
      return closed;
    },
    configWaitingFor: () => resolver.waitingFor(),
    onChange(listener) {
      listeners.push(listener);
      return () => {
        listeners = listeners.filter((l) => l !== listener);
      };
    },
    release: (entry) => manager.release(entry),
  };

  const resolver = startXdsResolver({
    client,
    listenerName: target.listenerName,
    host: target.host,
    random,
    serializer,
    onUpdate(update) {
      if (closed !== undefined) return;
      if (update instanceof ConnectError) logger.warn(`[connect-xds ${options.target}] calls fail: ${update.message}`);
      else logger.info(`[connect-xds ${options.target}] routes updated: clusters ${[...update.clusters].join(", ")}`);
      const next = new Map<string, ClusterEntry>();
      if (!(update instanceof ConnectError)) for (const name of update.clusters) next.set(name, manager.acquire(name));
      for (const entry of clusters.values()) manager.release(entry);
      clusters = next;
      selector = update;
      notify();
    },
    onAmbientError: ambientErrorLogger(
      (message) => logger.warn(message),
      `[connect-xds ${options.target}]`,
      client.bootstrap.node.id,
      ownsClient,
    ),
  });

  // Why each call failed, at debug: read once, so calls pay nothing when debug is off.
  const debugCalls = logger.isEnabled?.("debug") ?? true;
  function traceFailure<R>(
    call: Promise<R>,
    method: { readonly parent: { readonly typeName: string }; readonly name: string },
  ): Promise<R> {
    if (!debugCalls) return call;
    return call.catch((error: unknown) => {
      logger.debug(`[connect-xds ${options.target}] ${methodName(method)} failed: ${ConnectError.from(error).message}`);
      throw error;
    });
  }
  // A9: connections close after idleTimeoutMs without calls; a call brings them back (in the serializer, as any
  // policy work).
  const activity = createIdleTracker(
    clock,
    idleTimeoutMs,
    () => serializer.run(() => pool.enterIdle()),
    () =>
      serializer.run(() => {
        pool.exitIdle();
        manager.exitIdle();
      }),
  );

  const ctx: CallContext = {
    state,
    target: options.target,
    metrics,
    defaultTimeoutMs: options.defaultTimeoutMs,
    random,
    ...(options.retryThrottling === undefined ? {} : { retryThrottle: createRetryThrottle(options.retryThrottling) }),
    retryBuffer,
    ...(options.retryAfterResponseHeaders === true ? { retryAfterResponseHeaders: true } : {}),
    activity,
  };

  const calls: Transport = {
    unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: ConstructorParameters<typeof Headers>[0],
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      const headers = new Headers(header);
      return traceFailure(
        runCall(
          ctx,
          methodName(method),
          undefined,
          signal,
          timeoutMs,
          headers,
          (transport, remaining) => transport.unary(method, signal, remaining, headers, input, contextValues),
          endUnary,
        ),
        method,
      );
    },
    stream<I extends DescMessage, O extends DescMessage>(
      method: DescMethodStreaming<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: ConstructorParameters<typeof Headers>[0],
      input: AsyncIterable<MessageInitShape<I>>,
      contextValues?: ContextValues,
    ): Promise<StreamResponse<I, O>> {
      const headers = new Headers(header);
      // A6: the request messages are kept until the call is committed, so an attempt can be made again.
      const replay = createRequestReplay(input);
      return traceFailure(
        runCall(
          ctx,
          methodName(method),
          replay as RequestReplay<unknown>,
          signal,
          timeoutMs,
          headers,
          (transport, remaining) =>
            transport.stream(method, signal, remaining, headers, replay.attempt(), contextValues),
          endStream,
        ),
        method,
      );
    },
  };
  const intercepted = withInterceptors(calls, options.interceptors ?? [], options.target);

  return {
    target: options.target,
    xdsClient: client,
    unary: intercepted.unary,
    stream: intercepted.stream,
    async close() {
      if (closed !== undefined) return;
      closed = new ConnectError(`the xDS transport for ${options.target} is closed`, Code.Unavailable);
      activity.close();
      resolver.stop();
      notify();
      serializer.run(() => {
        for (const entry of clusters.values()) manager.release(entry);
        clusters = new Map();
        manager.closeAll();
        // Every connection the transport opened, whatever a policy still holds.
        pool.close();
        security.close();
      });
      if (lrs !== undefined) await releaseLrs(client);
      if (ownsClient) await client.close();
    },
  };
}
