// What a relay is made of, besides its server: the upstream client (and its reachability), the relay table, the
// upstream subscriptions, the per-node streams, the LRS forwarder, and the resource source that serves them to the
// control plane's stream layer (docs/decisions.md#relay-serving).
import { DEFAULT_FULL_STATE_TYPE_URLS, DEFAULT_LIMITS, DPDS_TYPE_URL } from "@xdskit/control-plane";
import { createXdsClient, type XdsClient } from "@xdskit/xds-client";
import { loggerFromEnvironment } from "@xdskit/xds-client/internal";
import { createRelaySource, type RelaySource } from "./downstream.js";
import { prefixed } from "./logger.js";
import { createLrsForwarder, type LrsForwarder } from "./lrs-forward.js";
import { PerNodeUpstreams } from "./per-node.js";
import type { RelayServerOptions, XdsRelayOptions } from "./relay-options.js";
import { RelayTable, type VersionCounter } from "./relay-table.js";
import { Upstream } from "./upstream.js";
import { createUpstreamHealth, type UpstreamHealth } from "./upstream-health.js";

export interface RelayParts {
  /** The options left for the downstream server. */
  readonly serverOptions: RelayServerOptions;
  readonly fullStateTypeUrls: ReadonlySet<string>;
  readonly client: XdsClient;
  readonly health: UpstreamHealth;
  readonly table: RelayTable;
  readonly upstream: Upstream;
  readonly perNode: PerNodeUpstreams | undefined;
  readonly lrs: LrsForwarder | undefined;
  readonly source: RelaySource;
  /** Closes everything but the server. */
  shutdown(): Promise<void>;
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}

/**
 * `register` adds a client to the relay's CSDS (the relay's own, and each node's for as long as its stream is open);
 * it returns the function that takes it out.
 */
export function createRelayParts(
  options: Omit<XdsRelayOptions, "csds">,
  register: (client: XdsClient) => () => void,
): RelayParts {
  const {
    upstream: upstreamOptions,
    retainUnusedMs = 30_000,
    maxUpstreamNamesPerType = DEFAULT_LIMITS.maxResourceNamesPerType,
    doNotCache = "per-node",
    perNodeTypeUrls = [DPDS_TYPE_URL],
    maxNodeUpstreams = 1_000,
    forwardLoadReports = true,
    maxLrsStreams = 10_000,
    ...serverOptions
  } = options;
  if (!(retainUnusedMs >= 0)) throw new RangeError("retainUnusedMs must be >= 0");
  positive("maxUpstreamNamesPerType", maxUpstreamNamesPerType);
  positive("maxNodeUpstreams", maxNodeUpstreams);
  positive("maxLrsStreams", maxLrsStreams);
  if (doNotCache !== "per-node" && doNotCache !== "refuse") {
    throw new RangeError('doNotCache must be "per-node" or "refuse"');
  }
  // Without a logger, the relay and its server log as the environment says for xds-relay, its upstream client as
  // it says for xds-client (docs/logging.md).
  const logger = options.logger ?? loggerFromEnvironment("xds-relay");
  const relayLogger = prefixed(logger ?? silent, "[xds-relay]");
  const clientLogger = upstreamOptions.logger ?? options.logger;
  const clientOptions = {
    ...upstreamOptions,
    ...(clientLogger === undefined ? {} : { logger: clientLogger }),
    // The relay depends on both (docs/decisions.md#relay-serving).
    features: { ...upstreamOptions.features, dynamicParameters: true, dataErrorHandling: true },
  };
  // The first server's reachability reads the client's counters: the client counts through it.
  let health: UpstreamHealth | undefined;
  const inner = upstreamOptions.metrics;
  const client = createXdsClient({
    ...clientOptions,
    metrics: {
      addCounter: (name, value, labels) =>
        health ? health.metrics.addCounter(name, value, labels) : inner?.addCounter(name, value, labels),
      ...(inner?.registerGauges ? { registerGauges: (callback) => inner.registerGauges?.(callback) ?? noop } : {}),
    },
    target: "#relay",
  });
  const firstServer = client.bootstrap.xdsServers[0]!;
  health = createUpstreamHealth({ server: firstServer, inner });
  register(client);
  const counter: VersionCounter = { value: 0 };
  const table = new RelayTable(counter);
  const fullStateTypeUrls = new Set(serverOptions.fullStateTypeUrls ?? DEFAULT_FULL_STATE_TYPE_URLS);
  const perNode =
    doNotCache === "per-node"
      ? new PerNodeUpstreams({
          bootstrap: client.bootstrap,
          clientOptions,
          counter,
          logger: relayLogger,
          fullStateTypeUrls,
          typeRegistry: serverOptions.typeRegistry,
          maxNamesPerType: maxUpstreamNamesPerType,
          maxNodes: maxNodeUpstreams,
          register,
        })
      : undefined;
  let source: RelaySource | undefined;
  const upstream = new Upstream({
    client,
    table,
    logger: relayLogger,
    fullStateTypeUrls,
    retainUnusedMs,
    typeRegistry: serverOptions.typeRegistry,
    maxNamesPerType: maxUpstreamNamesPerType,
    doNotCache: perNode ? (typeUrl, name) => source?.perNodeFrom(typeUrl, name) : "refuse",
  });
  const lrs = forwardLoadReports
    ? createLrsForwarder({ server: firstServer, logger: relayLogger, maxStreams: maxLrsStreams })
    : undefined;
  source = createRelaySource({
    table,
    upstream,
    perNode,
    perNodeTypeUrls: new Set(perNodeTypeUrls),
    fullStateTypeUrls,
    ...(lrs ? { serveLrs: lrs.serve } : {}),
  });
  const healthOf = health;
  return {
    serverOptions: logger === undefined ? serverOptions : { ...serverOptions, logger: relayLogger },
    fullStateTypeUrls,
    client,
    health: healthOf,
    table,
    upstream,
    perNode,
    lrs,
    source,
    async shutdown() {
      upstream.close();
      await perNode?.close();
      lrs?.close();
      healthOf.close();
      await client.close();
    },
  };
}

const noop = (): void => {};
const silent = { error: noop, warn: noop, info: noop, debug: noop };
