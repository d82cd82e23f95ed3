// The public shape of a management server: its options and its interface. The implementation is in
// management-server.ts.

import type { Registry } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import type { DynamicParameterConstraintsMap } from "@xdskit/protos/envoy/config/dynamic_parameters/v3/dynamic_parameters_pb";
import type { ManagementServerHooks } from "../hooks/hooks.js";
import type { ServerLimits } from "../limits.js";
import type { Logger } from "../logger.js";
import type { LrsPolicy, LrsSink } from "../lrs/lrs-sink.js";
import type { DynamicParametersInit } from "../resources/dynamic-parameters.js";
import type { ResourceSet } from "../resources/resource-set.js";
import type { NodeScope, NodeSelector } from "../resources/resource-store.js";
import type { SecurityOptions } from "../security/authorization-options.js";
import type { StreamInfo } from "../streams/stream-info.js";

export interface ManagementServerOptions extends Partial<ServerLimits>, SecurityOptions {
  /** Default `127.0.0.1`. */
  readonly host?: string;
  /** Default 0: an ephemeral port, kept across `restart()`. */
  readonly port?: number;
  /**
   * Listen as soon as it is created. Default true. False: nothing is served until `start()`, e.g. until the
   * resources are loaded from a store, so that no client is ever told the server has none of them.
   */
  readonly listen?: boolean;
  readonly logger?: Logger;
  /** Wrap every SotW resource in `envoy.service.discovery.v3.Resource` (a resource's own `wrap` wins). Default false. */
  readonly wrapResources?: boolean;
  /** Types whose SotW responses carry every subscribed resource. Default LDS and CDS. */
  readonly fullStateTypeUrls?: readonly string[];
  /** Sent as `control_plane.identifier` in every response. */
  readonly controlPlaneId?: string;
  /** Message types beyond `@xdskit/protos`, for packing resources of other types. */
  readonly typeRegistry?: Registry;
  /** Serve DeltaAggregatedResources too. Default true. */
  readonly delta?: boolean;
  /**
   * How many hook events to keep for `history()` and for `waitFor*` to look back on. Default 1000. Events hold the
   * responses they report: a server embedded in production may set 0.
   */
  readonly historyLimit?: number;
  /** On stop, how long connections may take to close cleanly before they are destroyed. Default 250 ms. */
  readonly shutdownGraceMs?: number;
  /** What the LRS sink asks of nodes without a policy of their own. Default every cluster, every 10 s. */
  readonly lrsPolicy?: LrsPolicy;
  /**
   * Variants of one name may overlap (a parameter map matching two of them gets the most specific). Default false:
   * an overlapping variant is refused with OverlappingVariantsError unless published with `allowOverlap`.
   */
  readonly allowOverlappingVariants?: boolean;
  /**
   * Resource versions worked out from each resource's bytes (a hash) rather than counted by this process: servers
   * holding the same resource give it the same version, so a delta client reconnecting to another replica (or
   * relay) with `initial_resource_versions` is sent only what differs. `force` still makes a new version. Default
   * false. See docs/decisions.md#content-versions.
   */
  readonly contentVersions?: boolean;
  /**
   * More services on the same port, through connect-node (e.g. `clientStatusRoutes(registry)` of `@xdskit/csds`):
   * they get the server's TLS, and a client certificate that did not verify is refused (UNAUTHENTICATED).
   */
  readonly routes?: (router: ConnectRouter) => void;
}

/** Options of `setDynamicParameters`. */
export interface DynamicParametersOptions {
  /** The resource name clients are configured to watch. Default `DEFAULT_DYNAMIC_PARAMETERS_NAME`. */
  readonly name?: string;
}

/**
 * An xDS management server: ADS (SotW and delta) over HTTP/2, cleartext or TLS, serving the resources you set. The server
 * itself is the default resource set; `forNode()` adds sets served to particular nodes.
 */
export interface ManagementServer extends ResourceSet {
  readonly host: string;
  /** The port it listens on (the ephemeral one when created with port 0), also while stopped. */
  readonly port: number;
  /** `http://host:port` (`https://` with TLS), for connect clients. */
  readonly url: string;
  /** `host:port`, for gRPC clients and bootstrap `server_uri`. */
  readonly address: string;
  readonly listening: boolean;
  readonly hooks: ManagementServerHooks;
  /** The LRS sink (`LoadReportingService` on the same port): load reports from clients with `lrs_server: self`. */
  readonly lrs: LrsSink;
  /** A resource set served to the nodes `selector` picks (the first matching scope wins), instead of the default. */
  forNode(selector: NodeSelector): NodeScope;
  /**
   * DPDS: serves the nodes `selector` picks a `DynamicParameterConstraintsMap` (built from `parameters` per resource
   * type, or given whole), marked `do_not_cache`, while they keep every other resource of their set. Setting it
   * again for the same selector (the same node id, or the same predicate) replaces it and pushes it to those nodes'
   * streams; the first selector set that matches a node wins over any DPDS resource in its set.
   */
  setDynamicParameters(
    selector: NodeSelector,
    parameters: DynamicParametersInit | DynamicParameterConstraintsMap,
    options?: DynamicParametersOptions,
  ): void;
  /**
   * Stops serving what `setDynamicParameters` set for `selector`: delta clients are told it is removed; a SotW client
   * keeps it (as it keeps any resource of a type other than LDS and CDS), so set `{}` to take every parameter back
   * in both protocols. Returns false if there was none.
   */
  clearDynamicParameters(selector: NodeSelector): boolean;
  /** The open streams. */
  streams(): StreamInfo[];
  /** Stops listening and ends every stream with UNAVAILABLE. The resources are kept. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  /** `stop()` then `start()`. */
  restart(): Promise<void>;
  /** Stops for good. */
  close(): Promise<void>;
  /**
   * Reads the TLS files again now (they are also watched); resolves true when new material went into use for new
   * connections, false when nothing changed or the new files do not make a valid TLS context (logged, the previous
   * certificate stays). False without TLS.
   */
  reloadTls(): Promise<boolean>;
  /** `canRead` may answer differently now: every open stream's subscriptions are checked again. */
  authorizationChanged(): void;
  [Symbol.asyncDispose](): Promise<void>;
}

// Declared as lib.esnext.disposable and @types/node declare it (the declarations merge), so the published .d.ts
// compiles for consumers that have neither (e.g. `lib: ["es2022"]`).
declare global {
  interface SymbolConstructor {
    readonly asyncDispose: unique symbol;
  }
}
