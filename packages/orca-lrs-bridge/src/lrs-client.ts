// The LRS client: a load store plus one StreamLoadStats call per LRS server that has load to report.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { createClient, type Transport } from "@connectrpc/connect";
import { type Node, NodeSchema } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { LoadReportingService } from "@xdskit/protos/envoy/service/load_stats/v3/lrs_pb";
import { type BackoffOptions, type Clock, createBackoff, systemClock } from "./clock.js";
import {
  createLoadStore,
  type DropStats,
  type DropStatsKey,
  type Locality,
  type LocalityStatsKey,
  type LrsServer,
  serverKeyOf,
} from "./load-store.js";
import type { LocalityStats } from "./locality-stats.js";
import { loggerFromEnvironment } from "./log-environment.js";
import { type Logger, noopLogger, scopeLogger } from "./logger.js";
import { LrsStream } from "./lrs-stream.js";
import { createOwnedTransport, type OwnedTransport } from "./transport.js";

export const SEND_ALL_CLUSTERS_FEATURE = "envoy.lrs.supports_send_all_clusters";

/** The node sent on each LRS call (the same fields as a bootstrap `node`, e.g. `@xdskit/xds-client`'s). */
export interface LrsNode {
  readonly id: string;
  readonly cluster?: string;
  readonly locality?: Locality;
  /** A JSON object (google.protobuf.Struct). */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** Default `xdskit`. */
  readonly userAgentName?: string;
  readonly userAgentVersion?: string;
  /** Sent with `envoy.lrs.supports_send_all_clusters`, which is always added. */
  readonly clientFeatures?: readonly string[];
}

export interface LrsClientOptions {
  readonly node: LrsNode;
  /** How to reach an LRS server. Default: gRPC over HTTP/2 (connect-node) to `serverUri`, closed by `close()`. */
  readonly transport?: (server: LrsServer) => Transport;
  /** The A85 switch; default `GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION` from `env`, else on. */
  readonly orcaLrsPropagation?: boolean;
  /** Default `process.env`, read once when the client is created. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly logger?: Logger;
  /** For report intervals and retries; tests pass a virtual clock. */
  readonly clock?: Clock;
  /** Retries of a failed LRS call. Default gRPC's: 1 s, x1.6, +-20 %, at most 120 s. */
  readonly backoff?: BackoffOptions;
  /** The shortest report interval, whatever the server asks. Default 1000 (gRPC's floor). */
  readonly minReportIntervalMs?: number;
  /** How long `close()` waits for a server to end its call after the last report. Default 1000. */
  readonly closeGraceMs?: number;
}

export interface LrsClient {
  /** The A85 switch as resolved when the client was created. */
  readonly orcaLrsPropagation: boolean;
  /** A handle for one locality of a cluster; starts the LRS call to its server if none runs. */
  localityStats(key: LocalityStatsKey): LocalityStats;
  /** A handle for a cluster's dropped calls; starts the LRS call to its server if none runs. */
  dropStats(key: DropStatsKey): DropStats;
  /** Sends each server what was not yet reported (once), ends every call, clears every timer. */
  close(): Promise<void>;
}

interface ServerState {
  readonly stream: LrsStream;
  readonly owned: OwnedTransport | undefined;
}

export function createLrsClient(options: LrsClientOptions): LrsClient {
  if (typeof options.node?.id !== "string") throw new TypeError("createLrsClient: node.id must be a string");
  const minReportIntervalMs = options.minReportIntervalMs ?? 1000;
  if (!(minReportIntervalMs > 0)) throw new RangeError("createLrsClient: minReportIntervalMs must be > 0");
  const clock = options.clock ?? systemClock;
  const logger = scopeLogger(
    options.logger ?? loggerFromEnvironment("orca-lrs-bridge", options.env) ?? noopLogger,
    "[lrs]",
  );
  const store = createLoadStore({
    clock,
    ...(options.orcaLrsPropagation === undefined ? {} : { orcaLrsPropagation: options.orcaLrsPropagation }),
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  const node = toNode(options.node);
  const servers = new Map<string, ServerState>();
  let closed = false;

  function serverFor(server: LrsServer): ServerState {
    const key = serverKeyOf(server);
    let state = servers.get(key);
    if (state === undefined) {
      const owned = options.transport ? undefined : createOwnedTransport(server.serverUri, server.channelCredentials);
      const transport = options.transport ? options.transport(server) : (owned as OwnedTransport).transport;
      const stream = new LrsStream({
        server,
        client: createClient(LoadReportingService, transport),
        node,
        store,
        clock,
        backoff: createBackoff(options.backoff),
        logger: logger.child(`[${server.serverUri}]`),
        minReportIntervalMs,
        closeGraceMs: options.closeGraceMs ?? 1000,
      });
      state = { stream, owned };
      servers.set(key, state);
    }
    return state;
  }

  function checkOpen(): void {
    if (closed) throw new Error("the LRS client is closed");
  }

  return {
    orcaLrsPropagation: store.orcaLrsPropagation,
    localityStats(key) {
      checkOpen();
      const stats = store.localityStats(key);
      serverFor(key.server).stream.ensureRunning();
      return stats;
    },
    dropStats(key) {
      checkOpen();
      const stats = store.dropStats(key);
      serverFor(key.server).stream.ensureRunning();
      return stats;
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(
        [...servers.values()].map(async ({ stream, owned }) => {
          await stream.close();
          owned?.close();
        }),
      );
      servers.clear();
    },
  };
}

function toNode(init: LrsNode): Node {
  const features = [...(init.clientFeatures ?? [])];
  if (!features.includes(SEND_ALL_CLUSTERS_FEATURE)) features.push(SEND_ALL_CLUSTERS_FEATURE);
  return create(NodeSchema, {
    id: init.id,
    cluster: init.cluster ?? "",
    ...(init.locality === undefined
      ? {}
      : {
          locality: {
            region: init.locality.region ?? "",
            zone: init.locality.zone ?? "",
            subZone: init.locality.subZone ?? "",
          },
        }),
    ...(init.metadata === undefined ? {} : { metadata: init.metadata as JsonObject }),
    userAgentName: init.userAgentName ?? "xdskit",
    ...(init.userAgentVersion === undefined
      ? {}
      : { userAgentVersionType: { case: "userAgentVersion" as const, value: init.userAgentVersion } }),
    clientFeatures: features,
  });
}
