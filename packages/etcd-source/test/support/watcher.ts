// An @xdskit/xds-client watching clusters on a replica, recording what each watcher is told.
import { type ClusterUpdate, clusterResourceType, createXdsClient, type XdsClient } from "@xdskit/xds-client";
import { onCleanup } from "./etcd.js";

export interface WatchEvent {
  readonly kind: "resource" | "error" | "ambient";
  readonly version?: string;
  readonly resource?: ClusterUpdate;
  readonly message?: string;
}

export interface ClusterWatcher {
  readonly client: XdsClient;
  readonly events: Map<string, WatchEvent[]>;
  /** Resolves once the named cluster has had `count` events. */
  next(name: string, count: number): Promise<WatchEvent>;
}

export function watchClusters(
  serverUri: string,
  names: readonly string[],
  options: { nodeId?: string; delta?: boolean; dynamicParameters?: Record<string, string> } = {},
): ClusterWatcher {
  const client = createXdsClient({
    bootstrap: {
      xds_servers: [
        {
          server_uri: serverUri,
          channel_creds: [{ type: "insecure" }],
          ...(options.delta === false ? {} : { api_type: "DELTA_GRPC" as const }),
        },
      ],
      node: { id: options.nodeId ?? "test-node" },
      ...(options.dynamicParameters ? { dynamic_parameters: options.dynamicParameters } : {}),
    },
  });
  onCleanup(() => client.close());
  const events = new Map<string, WatchEvent[]>();
  const waiters: { name: string; count: number; resolve: (e: WatchEvent) => void }[] = [];
  const record = (name: string, event: WatchEvent) => {
    const list = events.get(name) ?? [];
    events.set(name, list);
    list.push(event);
    for (const waiter of waiters.filter((w) => w.name === name && w.count <= list.length)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(list[waiter.count - 1]!);
    }
  };
  for (const name of names) {
    client.watch(clusterResourceType, name, {
      onResourceChanged(result) {
        if (result.ok) record(name, { kind: "resource", version: result.version, resource: result.resource });
        else record(name, { kind: "error", message: result.error.message });
      },
      onAmbientError(error) {
        record(name, { kind: "ambient", message: error.message });
      },
    });
  }
  return {
    client,
    events,
    next(name, count) {
      const list = events.get(name) ?? [];
      if (list.length >= count) return Promise.resolve(list[count - 1]!);
      return new Promise((resolve) => waiters.push({ name, count, resolve }));
    },
  };
}
