// Who may read which client of a CSDS service served on the control plane's port (docs/security.md#csds). A CSDS
// answer is one `ClientConfig` per registered xDS client, each with its node and `client_scope`: a response keeps
// only the configs the peer may read, so a client certificate never reads another node's config dump.
import type { DescMessage } from "@bufbuild/protobuf";
import type { Interceptor, StreamResponse } from "@connectrpc/connect";
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import type { ClientConfig, ClientStatusResponse } from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import type { IdentityOptions } from "./authorization.js";
import type { PeerIdentity } from "./identity.js";
import { peerKey } from "./identity-peers.js";

/** One client of a CSDS answer, as the policy sees it. */
export interface ClientStatusScope {
  /** The client's `client_scope` (A71: its data-plane target; `#server` for the default). */
  readonly clientScope: string;
  /** The node the client reports as. */
  readonly node: Node | undefined;
}

/** Whether `peer` may read the config dump of one client in a CSDS answer. Synchronous. */
export type CanReadClientStatus = (peer: PeerIdentity, client: ClientStatusScope) => boolean;

const CSDS_SERVICE = "envoy.service.status.v3.ClientStatusDiscoveryService";

/**
 * The policy in force: `canReadClientStatus` if given; else, with `identity`, a client's config is readable by the
 * certificate bound to its node; else none (every peer that may connect reads every config).
 */
export function clientStatusPolicy(options: {
  readonly canReadClientStatus?: CanReadClientStatus | undefined;
  readonly identity?: IdentityOptions | undefined;
}): CanReadClientStatus | undefined {
  if (options.canReadClientStatus) return options.canReadClientStatus;
  const identity = options.identity;
  if (!identity) return undefined;
  return (peer, client) =>
    peer.certificate !== undefined &&
    client.node !== undefined &&
    identity.nodeIdFromCertificate(peer.certificate) === client.node.id;
}

/** A connect-node interceptor keeping, in every CSDS response, the configs `canRead` lets the peer read. */
export function clientStatusAccess(canRead: CanReadClientStatus): Interceptor {
  return (next) => async (req) => {
    const res = await next(req);
    if (req.service.typeName !== CSDS_SERVICE) return res;
    const peer = req.contextValues.get(peerKey);
    const keep = (config: ClientConfig) =>
      peer !== undefined && canRead(peer, { clientScope: config.clientScope, node: config.node });
    const filter = (message: ClientStatusResponse): ClientStatusResponse => ({
      ...message,
      config: message.config.filter(keep),
    });
    if (!res.stream) return { ...res, message: filter(res.message as ClientStatusResponse) } as typeof res;
    const messages = res.message as AsyncIterable<ClientStatusResponse>;
    return {
      ...res,
      message: (async function* () {
        for await (const message of messages) yield filter(message);
      })(),
    } as StreamResponse<DescMessage, DescMessage> as typeof res;
  };
}
