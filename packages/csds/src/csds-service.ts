// The CSDS service (A40): each request gets the config dump of every registered client, one ClientConfig per
// client (A71: clients are per data-plane target, told apart by `client_scope`).
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import {
  type ClientConfig,
  ClientStatusDiscoveryService,
  type ClientStatusRequest,
  type ClientStatusResponse,
  ClientStatusResponseSchema,
} from "@xdskit/protos/envoy/service/status/v3/csds_pb";

/** Anything that can dump its xDS config: an @xdskit/xds-client, or another client. */
export interface ClientStatusSource {
  dumpResources(): ClientConfig;
}

/** The clients a CSDS service reports; add and remove as they come and go. */
export interface ClientStatusRegistry {
  /** Registers a client; the returned function unregisters it. */
  add(source: ClientStatusSource): () => void;
  /** Every registered client's config, in registration order (empty when there is none). */
  dump(): ClientStatusResponse;
}

export function createClientStatusRegistry(): ClientStatusRegistry {
  const sources = new Set<ClientStatusSource>();
  return {
    add(source) {
      sources.add(source);
      return () => {
        sources.delete(source);
      };
    },
    dump() {
      return create(ClientStatusResponseSchema, { config: [...sources].map((s) => s.dumpResources()) });
    },
  };
}

/** Answers one request, or throws INVALID_ARGUMENT for node matchers (A40: clients do not filter by node). */
export function answerClientStatus(request: ClientStatusRequest, registry: ClientStatusRegistry): ClientStatusResponse {
  if (request.nodeMatchers.length > 0) {
    throw new ConnectError("node_matchers is not supported by xDS clients' CSDS", Code.InvalidArgument);
  }
  return registry.dump();
}

/** Registers `envoy.service.status.v3.ClientStatusDiscoveryService` (streaming and unary) on a Connect router. */
export function clientStatusRoutes(registry: ClientStatusRegistry): (router: ConnectRouter) => void {
  return (router) =>
    router.service(ClientStatusDiscoveryService, {
      async *streamClientStatus(requests) {
        for await (const request of requests) yield answerClientStatus(request, registry);
      },
      fetchClientStatus: (request) => answerClientStatus(request, registry),
    });
}
