import type * as http from "node:http";
import type * as http2 from "node:http2";
import { Code, ConnectError, createContextKey, createContextValues, type Interceptor } from "@connectrpc/connect";
import type { PeerIdentity } from "./identity.js";
import { peerIdentityOf } from "./identity-certificate.js";

/** The peer of a connect-node call (services beside ADS). */
export const peerKey = createContextKey<PeerIdentity | undefined>(undefined, { description: "peer identity" });

/** Who is at the other end of each connection: worked out on its first stream (the TLS handshake is done by then). */
export interface PeerLookup {
  peerOf(req: http2.Http2ServerRequest | http.IncomingMessage): PeerIdentity;
  /** connect-node's `contextValues` option: the peer under `peerKey`. */
  contextValues(req: http2.Http2ServerRequest | http.IncomingMessage): ReturnType<typeof createContextValues>;
}

export function createPeerLookup(): PeerLookup {
  const peers = new WeakMap<http2.Http2Session, PeerIdentity>();
  const peerOf = (req: http2.Http2ServerRequest | http.IncomingMessage): PeerIdentity => {
    const session = "stream" in req ? req.stream.session : undefined;
    if (!session) return peerIdentityOf(req.socket);
    let peer = peers.get(session);
    if (!peer) {
      peer = peerIdentityOf(req.socket);
      peers.set(session, peer);
    }
    return peer;
  };
  return { peerOf, contextValues: (req) => createContextValues().set(peerKey, peerOf(req)) };
}

/** Services beside ADS refuse a client whose certificate did not verify (possible with `requireClientCert: false`). */
export const refuseUnverifiedPeers: Interceptor = (next) => (req) => {
  const error = req.contextValues.get(peerKey)?.certificateError;
  if (error !== undefined) {
    throw new ConnectError(`the client certificate did not verify: ${error}`, Code.Unauthenticated);
  }
  return next(req);
};
