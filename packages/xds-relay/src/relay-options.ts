// The options of `createXdsRelay`: its downstream server's (the control plane's) and its own.
import type { ManagementServerOptions } from "@xdskit/control-plane";
import type { XdsClientOptions } from "@xdskit/xds-client";

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
