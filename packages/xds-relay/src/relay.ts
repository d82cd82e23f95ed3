// createXdsRelay: an xDS server downstream (the control plane's stream layer: ADS SotW and delta, flow control,
// limits, TLS, TP3 errors) whose resources come from an @xdskit/xds-client upstream, one upstream subscription per
// (type, name, parameter map) its downstream clients use (docs/decisions.md#relay-serving).
import type { ConnectRouter } from "@connectrpc/connect";
import {
  DEFAULT_FULL_STATE_TYPE_URLS,
  type ManagementServerHooks,
  type ManagementServerOptions,
  type StreamInfo,
} from "@xdskit/control-plane";
import { createManagementServerWithSource } from "@xdskit/control-plane/internal";
import { clientStatusRoutes, createClientStatusRegistry } from "@xdskit/csds";
import { createXdsClient, type XdsClient, type XdsClientOptions } from "@xdskit/xds-client";
import { loggerFromEnvironment } from "@xdskit/xds-client/internal";
import { createRelaySource } from "./downstream.js";
import { prefixed } from "./logger.js";
import { RelayTable } from "./relay-table.js";
import { Upstream } from "./upstream.js";

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
  /** Serve CSDS (`ClientStatusDiscoveryService`) on the relay's port, reporting its upstream client. Default true. */
  readonly csds?: boolean;
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
}

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
  const { upstream: upstreamOptions, retainUnusedMs = 30_000, csds = true, ...serverOptions } = options;
  if (!(retainUnusedMs >= 0)) throw new RangeError("retainUnusedMs must be >= 0");
  // Without a logger, the relay and its server log as the environment says for xds-relay, its upstream client as
  // it says for xds-client (docs/logging.md).
  const logger = options.logger ?? loggerFromEnvironment("xds-relay");
  const client = createXdsClient({
    ...upstreamOptions,
    ...(upstreamOptions.logger === undefined && options.logger !== undefined ? { logger: options.logger } : {}),
    target: "#relay",
    features: { ...upstreamOptions.features, dynamicParameters: true, dataErrorHandling: true },
  });
  const table = new RelayTable();
  const upstream = new Upstream({
    client,
    table,
    logger: prefixed(logger ?? silent, "[xds-relay]"),
    fullStateTypeUrls: new Set(serverOptions.fullStateTypeUrls ?? DEFAULT_FULL_STATE_TYPE_URLS),
    retainUnusedMs,
    typeRegistry: serverOptions.typeRegistry,
  });
  const registry = createClientStatusRegistry();
  registry.add(client);
  const routes = (router: ConnectRouter): void => {
    if (csds) clientStatusRoutes(registry)(router);
    serverOptions.routes?.(router);
  };
  let server: Awaited<ReturnType<typeof createManagementServerWithSource>>;
  try {
    server = await createManagementServerWithSource(
      { ...serverOptions, ...(logger === undefined ? {} : { logger: prefixed(logger, "[xds-relay]") }), routes },
      createRelaySource(table, upstream),
    );
  } catch (error) {
    upstream.close();
    await client.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await server.close();
      upstream.close();
      await client.close();
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
      return { upstreamSubscriptions: upstream.size, names, cachedEntries, streams: server.streams().length };
    },
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
