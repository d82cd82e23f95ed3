// Clusters in use: an entry per cluster that a config selector names or a call in flight uses (A28's reference
// counting). An entry watches its CDS resource and, for an aggregate cluster, the CDS resources of the graph under it
// (cluster-graph.ts); each leaf's endpoints come from its EDS resource or, for LOGICAL_DNS, from Node's resolver.
// The entry's policy tree is the leaf's (cluster-leaf.ts), or for an aggregate a priority policy over its leaves'
// (A75). Its published picker is what calls for that cluster use.
import { Code, ConnectError } from "@connectrpc/connect";
import type { LrsClient } from "@xdskit/orca-lrs-bridge";
import {
  type ClusterUpdate,
  clusterResourceType,
  endpointResourceType,
  type ResourceType,
  type UpstreamTlsConfig,
  type XdsClient,
  type XdsError,
} from "@xdskit/xds-client";
import {
  type ConnectivityState,
  failingPicker,
  type LbEndpoint,
  type LbHelper,
  type LbPolicy,
  type LbPolicyFactory,
  type LbPolicyRegistry,
  type Picker,
  queuePicker,
} from "../balancer/lb-policy.js";
import { createLbPolicyRegistry } from "../balancer/lb-registry.js";
import type { SecurityKey } from "../credentials/fallback-credentials.js";
import { type PriorityConfig, priorityPolicy } from "../policies/priority.js";
import type { WorkSerializer } from "../shared/work-serializer.js";
import { describeXdsError, resourceLabel, withNodeId } from "../shared/xds-errors.js";
import { type ClusterLookup, resolveClusterGraph } from "./cluster-graph.js";
import { CLUSTER_LEAF_POLICY, clusterLeafPolicy, edsResourceName, type LeafData, leafUpdate } from "./cluster-leaf.js";
import { type DnsLookup, startLogicalDns } from "./logical-dns.js";

export interface ClusterManagerOptions {
  readonly client: XdsClient;
  readonly clusterType?: ResourceType<ClusterUpdate>;
  readonly serializer: WorkSerializer;
  /** The helper each cluster's tree is built with; `updateState` is replaced per cluster. */
  readonly helper: Omit<LbHelper, "updateState">;
  readonly lrs: () => LrsClient | undefined;
  /** A29: the connections of a cluster with that `security` (upstream-tls.ts); cleartext when absent. */
  readonly security?: (config: UpstreamTlsConfig | undefined) => SecurityKey | undefined;
  /** Called after any cluster published a new picker (queued calls pick again). */
  readonly onPicker: () => void;
  /** LOGICAL_DNS resolution (tests substitute their own): Node's `dns.lookup`, at most every 30 s, by default. */
  readonly dns?: { readonly lookup?: DnsLookup; readonly minIntervalMs?: number };
}

/** A CDS watch of the graph and what it last had (`undefined` until the first answer). */
interface CdsWatch {
  result: ClusterUpdate | { readonly error: string } | undefined;
  cancel: () => void;
}

/** A leaf's endpoint discovery: its EDS watch or DNS resolver, keyed so a changed cluster replaces it. */
interface Discovery {
  readonly key: string;
  data: LeafData | undefined;
  readonly reresolve: () => void;
  readonly stop: () => void;
}

/** What every entry of one manager shares: the leaf factory and the registry its aggregate trees use. */
interface Shared {
  readonly leaf: LbPolicyFactory;
  readonly registry: LbPolicyRegistry;
}

export class ClusterEntry {
  refs = 0;
  state: ConnectivityState = "CONNECTING";
  picker: Picker = queuePicker;
  private readonly cds = new Map<string, CdsWatch>();
  private readonly discoveries = new Map<string, Discovery>();
  private root: { policy: LbPolicy; aggregate: boolean } | undefined;
  private closed = false;

  constructor(
    readonly name: string,
    private readonly options: ClusterManagerOptions,
    private readonly shared: Shared,
  ) {
    this.watchCds(name);
  }

  private watchCds(name: string): void {
    const { client, serializer } = this.options;
    const watch: CdsWatch = { result: undefined, cancel: () => {} };
    this.cds.set(name, watch);
    watch.cancel = client.watch(this.options.clusterType ?? clusterResourceType, name, {
      onResourceChanged: (result) =>
        serializer.run(() => {
          if (this.closed || this.cds.get(name) !== watch) return;
          watch.result = result.ok ? result.resource : { error: this.describe(result.error) };
          this.refresh();
        }),
      onAmbientError: () => {},
    });
  }

  /** An xDS error as calls read it: the resource by type and name, the node ID once. */
  private describe(error: XdsError): string {
    return withNodeId(describeXdsError(error), error.nodeId ?? this.options.client.bootstrap.node.id);
  }

  /**
   * What a call to this cluster waits for while its picker queues: the first CDS resource of its graph not
   * received yet, else the first leaf's endpoints (EDS or DNS) not received yet, else a connection.
   */
  waitingFor(): string {
    const nodeId = this.options.client.bootstrap.node.id;
    const type = this.options.clusterType ?? clusterResourceType;
    for (const [name, watch] of this.cds) {
      if (watch.result === undefined) return withNodeId(`the ${resourceLabel(type.typeUrl, name)} (CDS)`, nodeId);
    }
    for (const [name, discovery] of this.discoveries) {
      if (discovery.data !== undefined) continue;
      const what = discovery.key.slice(4);
      if (discovery.key.startsWith("dns:")) return `the DNS addresses of "${what}" for cluster "${name}"`;
      const label = resourceLabel(endpointResourceType.typeUrl, what);
      return withNodeId(`the endpoints of cluster "${name}": the ${label} (EDS)`, nodeId);
    }
    return `a connection to cluster "${this.name}" (${this.state})`;
  }

  /** Walks the CDS graph, syncs the watches and discoveries it needs, and rebuilds the tree once all have data. */
  private refresh(): void {
    const lookup: ClusterLookup = (name) => this.cds.get(name)?.result;
    const graph = resolveClusterGraph(this.name, lookup);
    for (const name of graph.clusters) if (!this.cds.has(name)) this.watchCds(name);
    for (const [name, watch] of this.cds) {
      if (graph.clusters.has(name)) continue;
      watch.cancel();
      this.cds.delete(name);
    }
    if (graph.kind === "error") {
      this.stopDiscoveries(new Set());
      this.fail(graph.message);
      return;
    }
    // Pending: the last tree (if any) keeps serving until the whole graph is known (A74: no config tears).
    if (graph.kind === "pending") return;
    const leaves = graph.leaves.map((name) => lookup(name) as ClusterUpdate);
    for (const leaf of leaves) this.discover(leaf);
    this.stopDiscoveries(new Set(graph.leaves));
    this.rebuild(leaves);
  }

  /** Starts (or keeps) the leaf's EDS watch or DNS resolver. */
  private discover(cluster: ClusterUpdate): void {
    const name = cluster.name;
    const key = cluster.type === "logical_dns" ? `dns:${cluster.dnsHostname}` : `eds:${edsResourceName(cluster)}`;
    const existing = this.discoveries.get(name);
    if (existing?.key === key) return;
    existing?.stop();
    const { serializer } = this.options;
    const discovery: Discovery = { key, data: undefined, reresolve: () => {}, stop: () => {} };
    const set = (data: LeafData) =>
      serializer.run(() => {
        if (this.closed || this.discoveries.get(name) !== discovery) return;
        // A37: an error after a result keeps the result.
        if (data.kind === "error" && discovery.data !== undefined && discovery.data.kind !== "error") return;
        discovery.data = data;
        this.refresh();
      });
    this.discoveries.set(name, discovery);
    if (cluster.type === "logical_dns") {
      const dns = startLogicalDns({
        hostname: cluster.dnsHostname,
        clock: this.options.helper.clock,
        random: this.options.helper.random,
        ...this.options.dns,
        onResult: (result) =>
          set(result.ok ? { kind: "dns", addresses: result.addresses } : { kind: "error", message: result.error }),
      });
      Object.assign(discovery, { reresolve: () => dns.requestReresolution(), stop: () => dns.close() });
      return;
    }
    const cancel = this.options.client.watch(endpointResourceType, edsResourceName(cluster), {
      // EDS errors are does-not-exist or unusable-with-nothing-cached: no endpoints, whatever came before (A37).
      onResourceChanged: (result) =>
        serializer.run(() => {
          if (this.closed || this.discoveries.get(name) !== discovery) return;
          discovery.data = result.ok
            ? { kind: "eds", assignment: result.resource }
            : { kind: "error", message: this.describe(result.error) };
          this.refresh();
        }),
      onAmbientError: () => {},
    });
    Object.assign(discovery, { stop: cancel });
  }

  private stopDiscoveries(keep: ReadonlySet<string>): void {
    for (const [name, discovery] of this.discoveries) {
      if (keep.has(name)) continue;
      discovery.stop();
      this.discoveries.delete(name);
    }
  }

  private rebuild(leaves: readonly ClusterUpdate[]): void {
    const data = leaves.map((leaf) => this.discoveries.get(leaf.name)?.data);
    if (data.some((d) => d === undefined)) return;
    const single = leaves.length === 1 && leaves[0]!.name === this.name;
    // A cluster of its own whose discovery failed before any result fails its calls with that error.
    if (single && data[0]!.kind === "error") {
      this.fail((data[0] as { message: string }).message);
      return;
    }
    try {
      if (this.root !== undefined && this.root.aggregate === single) {
        this.root.policy.close();
        this.root = undefined;
      }
      if (this.root === undefined) {
        const helper: LbHelper = {
          ...this.options.helper,
          registry: this.shared.registry,
          updateState: (state, picker) => {
            if (this.closed) return;
            this.state = state;
            this.picker = picker;
            this.options.onPicker();
          },
        };
        const factory = single ? this.shared.leaf : priorityPolicy;
        this.root = { policy: (factory as LbPolicyFactory).create(helper), aggregate: !single };
      }
      const reresolve = (name: string) => () => this.discoveries.get(name)?.reresolve();
      if (single) {
        const { config, endpoints } = leafUpdate(leaves[0]!, data[0]!, [], reresolve(this.name));
        this.root.policy.update({ config, endpoints });
        return;
      }
      // A75: one priority per leaf cluster, in the graph's order; each child is that leaf's own tree.
      const endpoints: LbEndpoint[] = [];
      const children = new Map<string, { config: readonly unknown[] }>();
      leaves.forEach((leaf, i) => {
        const update = leafUpdate(leaf, data[i]!, [leaf.name], reresolve(leaf.name));
        children.set(leaf.name, { config: [{ [CLUSTER_LEAF_POLICY]: update.config }] });
        endpoints.push(...update.endpoints);
      });
      const config: PriorityConfig = { priorities: leaves.map((leaf) => leaf.name), children };
      this.root.policy.update({ config, endpoints });
    } catch (error) {
      this.fail(`cluster "${this.name}": ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** The cluster cannot carry calls: its tree goes, calls fail UNAVAILABLE with `message`. */
  private fail(message: string): void {
    if (this.closed) return;
    this.root?.policy.close();
    this.root = undefined;
    this.state = "TRANSIENT_FAILURE";
    this.picker = failingPicker(new ConnectError(message, Code.Unavailable));
    this.options.onPicker();
  }

  /** A9: the transport left idle; the tree connects again as it would for a first pick. */
  exitIdle(): void {
    if (!this.closed) this.root?.policy.exitIdle();
  }

  close(): void {
    this.closed = true;
    for (const watch of this.cds.values()) watch.cancel();
    this.cds.clear();
    this.stopDiscoveries(new Set());
    this.root?.policy.close();
    this.root = undefined;
  }
}

export interface ClusterManager {
  /** The entry of `name`, created (and its watches started) when missing; its count goes up by one. */
  acquire(name: string): ClusterEntry;
  /** Counts down; at zero the entry's watches and tree go. */
  release(entry: ClusterEntry): void;
  get(name: string): ClusterEntry | undefined;
  /** A9: every entry's tree leaves idle. */
  exitIdle(): void;
  closeAll(): void;
}

export function createClusterManager(options: ClusterManagerOptions): ClusterManager {
  const entries = new Map<string, ClusterEntry>();
  const leaf = clusterLeafPolicy(options.lrs, options.security) as LbPolicyFactory;
  const shared: Shared = { leaf, registry: createLbPolicyRegistry([...options.helper.registry.list(), leaf]) };
  return {
    acquire(name) {
      let entry = entries.get(name);
      if (entry === undefined) {
        entry = new ClusterEntry(name, options, shared);
        entries.set(name, entry);
      }
      entry.refs++;
      return entry;
    },
    release(entry) {
      if (--entry.refs > 0) return;
      if (entries.get(entry.name) === entry) entries.delete(entry.name);
      options.serializer.run(() => entry.close());
    },
    get: (name) => entries.get(name),
    exitIdle() {
      for (const entry of entries.values()) entry.exitIdle();
    },
    closeAll() {
      for (const entry of entries.values()) entry.close();
      entries.clear();
    },
  };
}
