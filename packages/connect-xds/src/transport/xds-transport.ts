// createXdsTransport: a Connect Transport for an `xds:` target. It wires the resolver, the cluster manager, the
// subchannel pool and the call path together (docs/architecture.md#connect-xds-the-call-path).
import { Code, ConnectError } from "@connectrpc/connect";
import { type LrsClient, systemClock } from "@xdskit/orca-lrs-bridge";
import { createXdsClient, type Logger, type XdsClient, type XdsMetricsRecorder } from "@xdskit/xds-client";
import { loggerFromEnvironment } from "@xdskit/xds-client/internal";
import type { LbMetrics } from "../balancer/lb-policy.js";
import { createLbPolicyRegistry } from "../balancer/lb-registry.js";
import type { CallContext } from "../call/call-context.js";
import type { CallMetricsRecorder } from "../call/metrics.js";
import { createClusterManager } from "../clusters/cluster-manager.js";
import { resolveKeepalive } from "../connections/keepalive.js";
import { createClusterSecurity } from "../credentials/upstream-tls.js";
import { builtinLbPolicies } from "../policies/index.js";
import { createRetryBufferPool } from "../policies/retry-buffer.js";
import { createRetryThrottle } from "../policies/retry-throttle.js";
import { startXdsResolver } from "../resolver/xds-resolver.js";
import { createUniform, intDraw } from "../shared/random.js";
import { createWorkSerializer } from "../shared/work-serializer.js";
import { ambientErrorLogger } from "../shared/xds-errors.js";
import { createEndpointSubchannel, type EndpointSubchannelBase } from "../subchannels/endpoint-subchannel.js";
import { createSubchannelPool } from "../subchannels/subchannel-pool.js";
import { clusterTypeFor } from "./cluster-type.js";
import { createIdleTracker, resolveIdleTimeout } from "./idle.js";
import { withInterceptors } from "./interceptors.js";
import { createRoutingState } from "./routing-state.js";
import { acquireLrs, releaseLrs } from "./shared-lrs.js";
import { parseXdsTarget } from "./target.js";
import { createTransportCalls } from "./transport-calls.js";
import type { XdsTransport, XdsTransportInternals, XdsTransportOptions } from "./xds-transport-options.js";

const noopLogger: Logger = { error() {}, warn() {}, info() {}, debug() {}, isEnabled: () => false };

/** The client to watch through (the caller's, or one made from the bootstrap) and the target parsed against it. */
function openClient(options: XdsTransportOptions): {
  readonly client: XdsClient;
  readonly ownsClient: boolean;
  readonly target: ReturnType<typeof parseXdsTarget>;
} {
  const ownsClient = options.client === undefined;
  const client =
    options.client ??
    createXdsClient({
      ...(options.bootstrap === undefined ? {} : { bootstrap: options.bootstrap }),
      target: options.target,
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.metrics === undefined ? {} : { metrics: options.metrics as unknown as XdsMetricsRecorder }),
    });
  try {
    return { client, ownsClient, target: parseXdsTarget(options.target, client.bootstrap) };
  } catch (error) {
    if (ownsClient) void client.close();
    throw error;
  }
}

/** The LB policies' view of the transport's metrics recorder (both methods optional there). */
function lbMetricsOf(metrics: CallMetricsRecorder | undefined): LbMetrics {
  return {
    addCounter: (name, value, labels) =>
      (metrics as { addCounter(n: string, v: number, l: object): void } | undefined)?.addCounter(name, value, labels),
    recordHistogram: (name, value, labels) =>
      (metrics as { recordHistogram?(n: string, v: number, l: object): void } | undefined)?.recordHistogram?.(
        name,
        value,
        labels,
      ),
  };
}

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
  const { client, ownsClient, target } = openClient(options);
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
  let lrs: LrsClient | undefined;
  const loadReporting = options.loadReporting ?? true;

  // Calls waiting for a change (config, any cluster's picker) wait on the routing state.
  const routing = createRoutingState({
    acquire: (name) => manager.acquire(name),
    release: (entry) => manager.release(entry),
    configWaitingFor: () => resolver.waitingFor(),
  });

  const base: EndpointSubchannelBase = {
    createSubchannel: (address, endpoint) => pool.acquire(address, endpoint),
    registry,
    logger,
    clock,
    random,
    randomInt: intDraw(random),
    target: options.target,
    metrics: lbMetricsOf(metrics),
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
      if (!loadReporting || routing.closed !== undefined) return undefined;
      lrs ??= acquireLrs(client, options.logger);
      return lrs;
    },
    onPicker: routing.notify,
    ...(internals.dns === undefined ? {} : { dns: internals.dns }),
  });

  const resolver = startXdsResolver({
    client,
    listenerName: target.listenerName,
    host: target.host,
    random,
    serializer,
    onUpdate(update) {
      if (routing.closed !== undefined) return;
      if (update instanceof ConnectError) logger.warn(`[connect-xds ${options.target}] calls fail: ${update.message}`);
      else logger.info(`[connect-xds ${options.target}] routes updated: clusters ${[...update.clusters].join(", ")}`);
      routing.update(update);
    },
    onAmbientError: ambientErrorLogger(
      (message) => logger.warn(message),
      `[connect-xds ${options.target}]`,
      client.bootstrap.node.id,
      ownsClient,
    ),
  });

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
    state: routing.state,
    target: options.target,
    metrics,
    defaultTimeoutMs: options.defaultTimeoutMs,
    random,
    ...(options.retryThrottling === undefined ? {} : { retryThrottle: createRetryThrottle(options.retryThrottling) }),
    retryBuffer,
    ...(options.retryAfterResponseHeaders === true ? { retryAfterResponseHeaders: true } : {}),
    activity,
  };
  const intercepted = withInterceptors(createTransportCalls(ctx, logger), options.interceptors ?? [], options.target);

  return {
    target: options.target,
    xdsClient: client,
    unary: intercepted.unary,
    stream: intercepted.stream,
    async close() {
      if (routing.closed !== undefined) return;
      routing.close(new ConnectError(`the xDS transport for ${options.target} is closed`, Code.Unavailable));
      activity.close();
      resolver.stop();
      routing.notify();
      serializer.run(() => {
        routing.releaseClusters();
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
