// Clusters in use: an entry per cluster that a config selector names or a call in flight uses (A28's reference
// counting). An entry watches its CDS resource and, for EDS clusters, the EDS resource, turns them into the endpoints
// and config of its policy tree (cluster_impl -> priority -> the cluster's policy) and keeps the tree's picker.
import { Code, ConnectError } from "@connectrpc/connect";
import type { LrsClient } from "@xdskit/orca-lrs-bridge";
import {
  type ClusterUpdate,
  clusterResourceType,
  type EndpointUpdate,
  endpointResourceType,
  type ResourceType,
  type XdsClient,
} from "@xdskit/xds-client";
import { ClusterImpl } from "./cluster-impl.js";
import {
  type ConnectivityState,
  failingPicker,
  type LbEndpoint,
  type LbHelper,
  type Picker,
  queuePicker,
} from "./lb-policy.js";
import { localityLabel } from "./locality.js";
import { withOutlierDetection } from "./policies/outlier-detection-policy.js";
import type { PriorityConfig } from "./policies/priority.js";
import type { WorkSerializer } from "./work-serializer.js";

const USABLE_HEALTH = new Set(["HEALTHY", "UNKNOWN"]);

export interface ClusterManagerOptions {
  readonly client: XdsClient;
  readonly clusterType?: ResourceType<ClusterUpdate>;
  readonly serializer: WorkSerializer;
  /** The helper each cluster's tree is built with; `updateState` is replaced per cluster. */
  readonly helper: Omit<LbHelper, "updateState">;
  readonly lrs: () => LrsClient | undefined;
  /** Called after any cluster published a new picker (queued calls pick again). */
  readonly onPicker: () => void;
}

export class ClusterEntry {
  refs = 0;
  state: ConnectivityState = "CONNECTING";
  picker: Picker = queuePicker;
  private cluster: ClusterUpdate | undefined;
  private endpoints: EndpointUpdate | undefined;
  private edsName: string | undefined;
  private cancelCds: () => void;
  private cancelEds: (() => void) | undefined;
  private root: ClusterImpl | undefined;
  private closed = false;

  constructor(
    readonly name: string,
    private readonly options: ClusterManagerOptions,
  ) {
    const { client, serializer } = options;
    this.cancelCds = client.watch(options.clusterType ?? clusterResourceType, name, {
      onResourceChanged: (result) =>
        serializer.run(() => (result.ok ? this.onCluster(result.resource) : this.fail(result.error.message))),
      onAmbientError: () => {},
    });
  }

  private onCluster(cluster: ClusterUpdate): void {
    if (this.closed) return;
    this.cluster = cluster;
    if (cluster.type !== "eds") {
      this.dropEds();
      this.fail(`cluster "${this.name}" is of type ${cluster.type}, which this transport does not support yet`);
      return;
    }
    const edsName = cluster.edsServiceName === "" ? cluster.name : cluster.edsServiceName;
    if (edsName !== this.edsName) {
      this.dropEds();
      this.edsName = edsName;
      this.cancelEds = this.options.client.watch(endpointResourceType, edsName, {
        onResourceChanged: (result) =>
          this.options.serializer.run(() => {
            if (this.closed || this.edsName !== edsName) return;
            if (result.ok) {
              this.endpoints = result.resource;
              this.rebuild();
            } else {
              this.endpoints = undefined;
              this.fail(result.error.message);
            }
          }),
        onAmbientError: () => {},
      });
    }
    this.rebuild();
  }

  private dropEds(): void {
    this.cancelEds?.();
    this.cancelEds = undefined;
    this.edsName = undefined;
    this.endpoints = undefined;
  }

  /** Endpoints by priority: each endpoint routed `priority-<n>` then its locality label. */
  private rebuild(): void {
    const cluster = this.cluster;
    const assignment = this.endpoints;
    if (cluster === undefined || assignment === undefined || cluster.type !== "eds") return;
    const endpoints: LbEndpoint[] = [];
    const priorities: string[] = [];
    const children = new Map<string, { config: readonly unknown[] }>();
    assignment.priorities.forEach((priority, index) => {
      const name = `priority-${index}`;
      priorities.push(name);
      children.set(name, { config: withOutlierDetection(cluster) });
      for (const locality of priority.localities) {
        const label = localityLabel(locality.locality);
        const lbLocality = Object.freeze({ name: locality.locality, label, weight: locality.weight });
        for (const endpoint of locality.endpoints) {
          if (!USABLE_HEALTH.has(endpoint.healthStatus)) continue;
          endpoints.push({
            addresses: endpoint.addresses.map(({ address, port }) =>
              address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`,
            ),
            weight: endpoint.weight,
            healthStatus: endpoint.healthStatus,
            hostname: endpoint.hostname,
            locality: lbLocality,
            path: [name, label],
          });
        }
      }
    });
    const childConfig: PriorityConfig = { priorities, children };
    try {
      this.root ??= new ClusterImpl(
        {
          ...this.options.helper,
          updateState: (state, picker) => {
            if (this.closed) return;
            this.state = state;
            this.picker = picker;
            this.options.onPicker();
          },
        },
        this.options.lrs,
      );
      this.root.update({
        config: {
          cluster,
          ...(cluster.edsServiceName === "" ? {} : { edsServiceName: cluster.edsServiceName }),
          dropOverloads: assignment.dropOverloads,
          child: { policy: "priority_experimental", config: childConfig },
        },
        endpoints,
        ...(endpoints.length === 0 ? { resolutionNote: `EDS resource "${this.edsName}" has no usable endpoints` } : {}),
      });
    } catch (error) {
      this.fail(`cluster "${this.name}": ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** The cluster cannot carry calls: its tree goes, calls fail UNAVAILABLE with `message`. */
  private fail(message: string): void {
    if (this.closed) return;
    this.root?.close();
    this.root = undefined;
    this.state = "TRANSIENT_FAILURE";
    this.picker = failingPicker(new ConnectError(message, Code.Unavailable));
    this.options.onPicker();
  }

  close(): void {
    this.closed = true;
    this.cancelCds();
    this.dropEds();
    this.root?.close();
    this.root = undefined;
  }
}

export interface ClusterManager {
  /** The entry of `name`, created (and its watches started) when missing; its count goes up by one. */
  acquire(name: string): ClusterEntry;
  /** Counts down; at zero the entry's watches and tree go. */
  release(entry: ClusterEntry): void;
  get(name: string): ClusterEntry | undefined;
  closeAll(): void;
}

export function createClusterManager(options: ClusterManagerOptions): ClusterManager {
  const entries = new Map<string, ClusterEntry>();
  return {
    acquire(name) {
      let entry = entries.get(name);
      if (entry === undefined) {
        entry = new ClusterEntry(name, options);
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
    closeAll() {
      for (const entry of entries.values()) entry.close();
      entries.clear();
    },
  };
}
