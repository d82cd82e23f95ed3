// What the end-to-end tests share: a real @xdskit/xds-client pointed at a real @xdskit/control-plane on
// 127.0.0.1, and a watcher that records what it is told as short strings.
import type { ManagementServer } from "@xdskit/control-plane";
import { ClientResourceStatus } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import {
  type ClusterUpdate,
  createXdsClient,
  type ResourceResult,
  type ResourceWatcher,
  type XdsClient,
  type XdsError,
} from "@xdskit/xds-client";

export type ApiType = "GRPC" | "DELTA_GRPC";

export function clientFor(server: ManagementServer, apiType: ApiType, nodeId = "e2e"): XdsClient {
  return createXdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: apiType }],
      node: { id: nodeId },
    },
    env: {},
  });
}

/** A watcher recording `resource:<label>`, `error:<code>`, `ambient:<code>` and `cleared`. */
export interface Recorder<T> extends ResourceWatcher<T> {
  /** Waits until `count` events are recorded (5 s at most), then removes and returns them. */
  take(count: number): Promise<string[]>;
  /** The events recorded so far, left in place. */
  readonly events: readonly string[];
}

export function recorder<T>(label: (resource: T) => string): Recorder<T> {
  const events: string[] = [];
  return {
    events,
    onResourceChanged(result: ResourceResult<T>) {
      events.push(result.ok ? `resource:${label(result.resource)}` : `error:${result.error.code}`);
    },
    onAmbientError(error: XdsError) {
      events.push(`ambient:${error.code}`);
    },
    onAmbientErrorCleared() {
      events.push("cleared");
    },
    async take(count) {
      for (let i = 0; i < 500 && events.length < count; i++) await new Promise((r) => setTimeout(r, 10));
      return events.splice(0, events.length);
    },
  };
}

/** A cluster watcher labelled by the cluster's EDS service name (what tells the test's variants apart). */
export const clusterRecorder = () =>
  recorder<ClusterUpdate>((cluster) => (cluster.type === "eds" ? cluster.edsServiceName : cluster.type));

/** CSDS as `name STATUS` lines. */
export function csds(client: XdsClient): string[] {
  return client
    .dumpResources()
    .genericXdsConfigs.map((c) => `${c.name} ${ClientResourceStatus[c.clientStatus] ?? String(c.clientStatus)}`);
}
