// What `xdskit serve` answers on its own port besides ADS: CSDS (the server's view of each client stream) and the
// gRPC health service. `xdskit csds <serve's address>` and grpcdebug read the first, load balancers and
// `grpc_health_probe` the second.
import { create } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import type { ManagementServer, StreamInfo, StreamTypeInfo } from "@xdskit/control-plane";
import { clientStatusRoutes, createClientStatusRegistry } from "@xdskit/csds";
import { ClientResourceStatus } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import {
  type ClientConfig,
  ClientConfig_GenericXdsConfigSchema,
  ClientConfigSchema,
  ConfigStatus,
} from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import { healthRoutes } from "./health-service.js";

/**
 * One subscription of a stream as the server sees it (docs/decisions.md#cli-serve-csds):
 * - nothing sent for it: REQUESTED, config status NOT_SENT;
 * - the type's latest response was NACKed and this resource was in it (sent at the latest version): NACKED, with
 *   the client's error detail, config status ERROR;
 * - sent at the latest version, not yet ACKed: REQUESTED, config status STALE;
 * - otherwise ACKED, config status SYNCED.
 */
function subscriptionStatus(type: StreamTypeInfo, name: string) {
  const version = type.sentVersions.get(name);
  const base = { typeUrl: type.typeUrl, name, versionInfo: version ?? "" };
  if (version === undefined) {
    return { ...base, clientStatus: ClientResourceStatus.REQUESTED, configStatus: ConfigStatus.NOT_SENT };
  }
  const latest = version === type.lastVersion;
  if (latest && type.nack) {
    return {
      ...base,
      clientStatus: ClientResourceStatus.NACKED,
      configStatus: ConfigStatus.ERROR,
      errorState: { details: type.nack.message, versionInfo: type.lastVersion },
    };
  }
  if (latest && type.waitingFor === "ack") {
    return { ...base, clientStatus: ClientResourceStatus.REQUESTED, configStatus: ConfigStatus.STALE };
  }
  return { ...base, clientStatus: ClientResourceStatus.ACKED, configStatus: ConfigStatus.SYNCED };
}

/** A stream as one CSDS client: its node, scope `stream <id> (<protocol>) from <peer>`, one row per subscription. */
export function streamClientConfig(stream: StreamInfo): ClientConfig {
  const rows = stream.types.flatMap((type) => {
    const names = new Set([...type.resourceNames, ...type.sentVersions.keys()]);
    return [...names].sort().map((name) => create(ClientConfig_GenericXdsConfigSchema, subscriptionStatus(type, name)));
  });
  return create(ClientConfigSchema, {
    ...(stream.node ? { node: stream.node } : {}),
    clientScope: `stream ${stream.id} (${stream.kind === "sotw" ? "state of the world" : "delta"}) from ${stream.peer ?? "?"}`,
    genericXdsConfigs: rows,
  });
}

/**
 * CSDS and health for `server`'s port: pass the result as the `routes` option, then call `attach(server)` once it
 * exists. Each open ADS stream is a client of the CSDS answer, in the order they opened.
 */
export function serveStatusRoutes(): {
  routes: (router: ConnectRouter) => void;
  attach: (server: ManagementServer) => void;
} {
  const registry = createClientStatusRegistry();
  const csds = clientStatusRoutes(registry);
  let server: ManagementServer | undefined;
  return {
    routes(router) {
      csds(router);
      healthRoutes(router, () => server?.listening ?? false);
    },
    attach(attached) {
      server = attached;
      const unregister = new Map<number, () => void>();
      attached.hooks.on("stream-open", (event) => {
        const source = {
          dumpResources: () => {
            const stream = attached.streams().find((s) => s.id === event.streamId);
            return stream ? streamClientConfig(stream) : create(ClientConfigSchema, {});
          },
        };
        unregister.set(event.streamId, registry.add(source));
      });
      attached.hooks.on("stream-close", (event) => {
        unregister.get(event.streamId)?.();
        unregister.delete(event.streamId);
      });
    },
  };
}
