// createXdsRelay: an xDS server downstream (the control plane's stream layer: ADS SotW and delta, flow control,
// limits, TLS, TP3 errors) whose resources come from an @xdskit/xds-client upstream, one upstream subscription per
// (type, name, parameter map) and per (type, parameter map) wildcard its downstream clients use; what depends on the
// client's node on one upstream stream per node; load reports forwarded (docs/decisions.md#relay-serving).
import type { ConnectRouter } from "@connectrpc/connect";
import type { ManagementServerHooks, StreamInfo } from "@xdskit/control-plane";
import { createManagementServerWithSource } from "@xdskit/control-plane/internal";
import { clientStatusRoutes, createClientStatusRegistry } from "@xdskit/csds";
import type { XdsClient } from "@xdskit/xds-client";
import type { Params } from "./params.js";
import type { XdsRelayOptions } from "./relay-options.js";
import { createRelayParts } from "./relay-parts.js";
import type { UpstreamHealthEvent, UpstreamState } from "./upstream-health.js";

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

export type { RelayServerOptions, XdsRelayOptions } from "./relay-options.js";
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
  const { csds = true, ...rest } = options;
  const registry = createClientStatusRegistry();
  const parts = createRelayParts(rest, (client) => registry.add(client));
  const { serverOptions, client, table, upstream, perNode, lrs, health } = parts;
  const routes = (router: ConnectRouter): void => {
    if (csds) clientStatusRoutes(registry)(router);
    serverOptions.routes?.(router);
  };
  let server: Awaited<ReturnType<typeof createManagementServerWithSource>>;
  try {
    server = await createManagementServerWithSource(
      { ...serverOptions, fullStateTypeUrls: [...parts.fullStateTypeUrls], routes },
      parts.source,
    );
  } catch (error) {
    await parts.shutdown();
    throw error;
  }
  health.start();
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await server.close();
      await parts.shutdown();
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
      return health.state;
    },
    onUpstreamState: (listener) => health.onChange(listener),
    stop: () => server.stop(),
    start: () => server.start(),
    restart: () => server.restart(),
    close,
    reloadTls: () => server.reloadTls(),
    authorizationChanged: () => server.authorizationChanged(),
    [Symbol.asyncDispose]: close,
  };
}
