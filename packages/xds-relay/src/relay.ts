// createXdsRelay: an xDS server downstream (the control plane's stream layer: ADS SotW and delta, flow control,
// limits, TLS, TP3 errors) whose resources come from an @xdskit/xds-client upstream, one upstream subscription per
// (type, name, parameter map) and per (type, parameter map) wildcard its downstream clients use; what depends on the
// client's node on one upstream stream per node; load reports forwarded (docs/decisions.md#relay-serving).
import type { ConnectRouter } from "@connectrpc/connect";
import {
  DEFAULT_FULL_STATE_TYPE_URLS,
  DEFAULT_LIMITS,
  DPDS_TYPE_URL,
  type ManagementServerHooks,
  type ManagementServerOptions,
  type StreamInfo,
} from "@xdskit/control-plane";
import { type ChangedVariants, createManagementServerWithSource } from "@xdskit/control-plane/internal";
import { clientStatusRoutes, createClientStatusRegistry } from "@xdskit/csds";
import { createXdsClient, type XdsClient, type XdsClientOptions } from "@xdskit/xds-client";
import { createRelaySource, type RelaySource } from "./downstream.js";
import { prefixed } from "./logger.js";
import { createLrsForwarder } from "./lrs-forward.js";
import type { Params } from "./params.js";
import { PerNodeUpstreams } from "./per-node.js";
import { RelayTable, type VersionCounter } from "./relay-table.js";
import { Upstream } from "./upstream.js";
import { createUpstreamHealth, type UpstreamHealthEvent, type UpstreamState } from "./upstream-health.js";

/** The relay's downstream server: the options of `@xdskit/control-plane`'s server that apply to a relay. */
export type RelayServerOptions = Omit<
  ManagementServerOptions,
  "allowOverlappingVariants" | "contentVersions" | "lrsPolicy"
>;

export interface XdsRelayOptions extends RelayServerOptions {
  /**
   * The relay's own xDS client, which fetches from the upstream: its bootstrap names the upstream servers (fallback,
   * authorities and delta as for any client) and the node the upstream sees, the relay's. `logger` defaults to the
   * relay's. Dynamic parameters and A88 data-error handling are always on in it: the relay depends on both.
   */
  readonly upstream: Omit<XdsClientOptions, "target">;
  /**
   * How long an upstream subscription that no downstream subscription uses any more is kept, so that a client
   * that comes back (a reconnect) is answered from cache at once. Default 30 s; 0 drops it at once.
   */
  readonly retainUnusedMs?: number;
  /** Serve CSDS (`ClientStatusDiscoveryService`) on the relay's port, reporting its upstream clients. Default true. */
  readonly csds?: boolean;
  /**
   * Upstream names the relay's upstream stream subscribes to per type, named subscriptions and wildcards together:
   * a downstream request that would go past it ends its stream with RESOURCE_EXHAUSTED, and subscribes nothing
   * (docs/decisions.md#relay-upstream-name-budget). Default 50,000, the control plane's `maxResourceNamesPerType`:
   * what an upstream with default limits accepts on one stream. Per-node streams have the same budget each.
   */
  readonly maxUpstreamNamesPerType?: number;
  /**
   * Resources the upstream marks `do_not_cache` (docs/decisions.md#relay-per-node-resources): `"per-node"` (default)
   * fetches them on an upstream stream of the client's node, served to that node only; `"refuse"` answers them with
   * FAILED_PRECONDITION, and clients fetch them from the authoritative server themselves.
   */
  readonly doNotCache?: "per-node" | "refuse";
  /**
   * Types always fetched per node, whatever the upstream marks (with `doNotCache: "per-node"`). Default: the DPDS
   * type, whose resource a server answers per node, and marks do_not_cache.
   */
  readonly perNodeTypeUrls?: readonly string[];
  /** Per-node upstream streams open at once; a further node is answered RESOURCE_EXHAUSTED. Default 1,000. */
  readonly maxNodeUpstreams?: number;
  /**
   * Load reports: downstream LRS streams are forwarded to the first upstream server, one upstream stream each
   * (docs/decisions.md#relay-load-reports). Default true; false keeps them in the relay's own sink (`hooks`-less).
   */
  readonly forwardLoadReports?: boolean;
  /** LRS streams forwarded at once; a further one ends with RESOURCE_EXHAUSTED. Default 10,000. */
  readonly maxLrsStreams?: number;
}

/** What the relay holds, for monitoring and tests. */
export interface RelayStats {
  /** Upstream subscriptions open: one per (type, name, parameter map) in use (or retained). */
  readonly upstreamSubscriptions: number;
  /** Names subscribed to, per type summed. */
  readonly names: number;
  /** Distinct resources and errors cached (a variant at one content counts once, however many maps it answers). */
  readonly cachedEntries: number;
  /** Downstream streams open. */
  readonly streams: number;
  /** Upstream streams open for resources that depend on the node (one per node). */
  readonly nodeUpstreams: number;
  /** Load-reporting streams forwarded now. */
  readonly lrsStreams: number;
}

/** One upstream stream of the relay and what it holds, per type (`XdsRelay.upstreamStreams()`). */
export interface UpstreamStreamInfo {
  /** The node the upstream sees: the relay's own, or a client's (resources that depend on the node). */
  readonly nodeId: string;
  /** Whether this is the relay's own stream (shared by every client), not a node's. */
  readonly shared: boolean;
  readonly types: readonly {
    readonly typeUrl: string;
    /** Subscriptions by name (per parameter map), retained ones included. */
    readonly names: number;
    /** The parameter maps of its wildcard subscriptions (`{}` for one without). */
    readonly wildcards: readonly Params[];
  }[];
}

export type { UpstreamHealthEvent, UpstreamState };

export interface XdsRelay {
  readonly host: string;
  /** The port it listens on (the ephemeral one when created with port 0), also while stopped. */
  readonly port: number;
  /** `http://host:port` (`https://` with TLS). */
  readonly url: string;
  /** `host:port`, for a downstream client's bootstrap `server_uri`. */
  readonly address: string;
  readonly listening: boolean;
  /** The downstream server's hooks: every request and response of the relay's streams. */
  readonly hooks: ManagementServerHooks;
  /** The upstream client (its `dumpResources()` is what the relay's CSDS reports). */
  readonly client: XdsClient;
  /** The open downstream streams. */
  streams(): StreamInfo[];
  stats(): RelayStats;
  /** The upstream streams open and what each holds (per type, wildcard parameters, node). */
  upstreamStreams(): UpstreamStreamInfo[];
  /** Whether the first upstream server could be reached, as last seen ("unknown" before anything was tried). */
  readonly upstreamState: UpstreamState;
  /**
   * Tells `listener` whenever the first upstream server becomes reachable or unreachable, as its ADS stream shows,
   * or an HTTP/2 handshake with it (tried at start, and while unreachable); returns the function that stops it.
   */
  onUpstreamState(listener: (event: UpstreamHealthEvent) => void): () => void;
  /** Stops serving downstream (every stream ends with UNAVAILABLE); the upstream subscriptions and cache stay. */
  stop(): Promise<void>;
  /** Serves again on the same port. */
  start(): Promise<void>;
  restart(): Promise<void>;
  /** Stops for good: downstream server, upstream subscriptions and client. */
  close(): Promise<void>;
  reloadTls(): Promise<boolean>;
  authorizationChanged(): void;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts a relay; resolves once it listens. The upstream is asked for nothing until a downstream client subscribes. */
export async function createXdsRelay(options: XdsRelayOptions): Promise<XdsRelay> {
  const {
    upstream: upstreamOptions,
    retainUnusedMs = 30_000,
    csds = true,
    maxUpstreamNamesPerType = DEFAULT_LIMITS.maxResourceNamesPerType,
    doNotCache = "per-node",
    perNodeTypeUrls = [DPDS_TYPE_URL],
    maxNodeUpstreams = 1_000,
    forwardLoadReports = true,
    maxLrsStreams = 10_000,
    ...serverOptions
  } = options;
  if (!(retainUnusedMs >= 0)) throw new RangeError("retainUnusedMs must be >= 0");
  for (const [name, value] of [
    ["maxUpstreamNamesPerType", maxUpstreamNamesPerType],
    ["maxNodeUpstreams", maxNodeUpstreams],
    ["maxLrsStreams", maxLrsStreams],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  }
  if (doNotCache !== "per-node" && doNotCache !== "refuse")
    throw new RangeError('doNotCache must be "per-node" or "refuse"');
  const logger = options.logger;
  const relayLogger = prefixed(logger ?? silent, "[xds-relay]");
  const clientLogger = upstreamOptions.logger ?? logger;
  const features = { ...upstreamOptions.features, dynamicParameters: true, dataErrorHandling: true };
  // The first server's health reads the client's counters: the client is created with the health's recorder.
  let health: ReturnType<typeof createUpstreamHealth> | undefined;
  const client = createXdsClient({
    ...upstreamOptions,
    ...(clientLogger === undefined ? {} : { logger: clientLogger }),
    metrics: {
      addCounter: (name, value, labels) =>
        health
          ? health.metrics.addCounter(name, value, labels)
          : upstreamOptions.metrics?.addCounter(name, value, labels),
      ...(upstreamOptions.metrics?.registerGauges
        ? { registerGauges: (callback) => upstreamOptions.metrics!.registerGauges!(callback) }
        : {}),
    },
    target: "#relay",
    features,
  });
  health = createUpstreamHealth({ server: client.bootstrap.xdsServers[0]!, inner: upstreamOptions.metrics });
  const counter: VersionCounter = { value: 0 };
  const table = new RelayTable(counter);
  const fullStateTypeUrls = new Set(serverOptions.fullStateTypeUrls ?? DEFAULT_FULL_STATE_TYPE_URLS);
  let notify: ((changed: ChangedVariants) => void) | undefined;
  const registry = createClientStatusRegistry();
  registry.add(client);
  const perNode =
    doNotCache === "per-node"
      ? new PerNodeUpstreams({
          bootstrap: client.bootstrap,
          clientOptions: {
            ...upstreamOptions,
            ...(clientLogger === undefined ? {} : { logger: clientLogger }),
            features,
          },
          counter,
          logger: relayLogger,
          fullStateTypeUrls,
          typeRegistry: serverOptions.typeRegistry,
          maxNamesPerType: maxUpstreamNamesPerType,
          maxNodes: maxNodeUpstreams,
          changed: (changed) => notify?.(changed),
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
    ? createLrsForwarder({ server: client.bootstrap.xdsServers[0]!, logger: relayLogger, maxStreams: maxLrsStreams })
    : undefined;
  source = createRelaySource({
    table,
    upstream,
    perNode,
    perNodeTypeUrls: new Set(perNodeTypeUrls),
    fullStateTypeUrls,
    ...(lrs ? { serveLrs: lrs.serve } : {}),
  });
  const relaySource = source;
  const attach = relaySource.attach.bind(relaySource);
  relaySource.attach = (changed) => {
    notify = changed;
    attach(changed);
  };
  const routes = (router: ConnectRouter): void => {
    if (csds) clientStatusRoutes(registry)(router);
    serverOptions.routes?.(router);
  };
  let server: Awaited<ReturnType<typeof createManagementServerWithSource>>;
  const shutdown = async () => {
    upstream.close();
    perNode?.close();
    lrs?.close();
    health?.close();
    await client.close();
  };
  try {
    server = await createManagementServerWithSource(
      { ...serverOptions, fullStateTypeUrls: [...fullStateTypeUrls], routes },
      relaySource,
    );
  } catch (error) {
    await shutdown();
    throw error;
  }
  health.start();
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await server.close();
      await shutdown();
    })();
    return closing;
  };
  return {
    host: server.host,
    get port() {
      return server.port;
    },
    get url() {
      return server.url;
    },
    get address() {
      return server.address;
    },
    get listening() {
      return server.listening;
    },
    hooks: server.hooks,
    client,
    streams: () => server.streams(),
    stats() {
      let names = 0;
      let cachedEntries = 0;
      for (const group of table.groups()) {
        names++;
        cachedEntries += group.entryCount;
      }
      return {
        upstreamSubscriptions: upstream.size,
        names,
        cachedEntries,
        streams: server.streams().length,
        nodeUpstreams: perNode?.size ?? 0,
        lrsStreams: lrs?.streams ?? 0,
      };
    },
    upstreamStreams() {
      const own: UpstreamStreamInfo[] =
        upstream.size > 0 ? [{ nodeId: client.bootstrap.node.id, shared: true, types: upstream.info() }] : [];
      return [...own, ...(perNode?.info() ?? []).map((n) => ({ nodeId: n.nodeId, shared: false, types: n.types }))];
    },
    get upstreamState() {
      return health?.state ?? "unknown";
    },
    onUpstreamState: (listener) => health?.onChange(listener) ?? (() => {}),
    stop: () => server.stop(),
    start: () => server.start(),
    restart: () => server.restart(),
    close,
    reloadTls: () => server.reloadTls(),
    authorizationChanged: () => server.authorizationChanged(),
    [Symbol.asyncDispose]: close,
  };
}

const noop = (): void => {};
const silent = { error: noop, warn: noop, info: noop, debug: noop };
