// What a server's ADS and LRS streams may do: admission at the first request, and the read policy (docs/security.md).

import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { createStreamAdmission } from "../security/authorization.js";
import type { SecurityOptions } from "../security/authorization-options.js";
import { createReadPolicy, type ReadAccess, type StreamIdentity } from "../security/authorization-read.js";
import type { PeerIdentity } from "../security/identity.js";
import { CDS_TYPE_URL } from "../type-urls.js";

export interface StreamAuthorization {
  /** Refuses (throws StreamRefusedError) a peer that may not be served as `node`. */
  readonly admit: (peer: PeerIdentity, node: Node | undefined) => void;
  /** What an admitted stream may read; undefined: everything (no read policy). */
  readAccess(identity: StreamIdentity): ReadAccess | undefined;
  /** `canRead` may answer differently now; returns whether there is a read policy (whose streams must be checked). */
  changed(): boolean;
  /** An LRS stream's first node was admitted: its peer is the identity the clusters named to it are read as. */
  lrsAdmitted(node: Node | undefined, peer: PeerIdentity): void;
  /** Of a node's clusters, those its LRS client may be told about: those of its set that it may read. */
  readableClusters(node: Node | undefined, clusterNames: string[]): string[];
}

/** `mutualTls`: the server verifies client certificates, which `identity` needs. */
export function createStreamAuthorization(options: SecurityOptions, mutualTls: boolean): StreamAuthorization {
  if (options.identity && !mutualTls) {
    throw new TypeError("identity binds nodes to client certificates: it needs tls with a CA (ca or caFile)");
  }
  const admit = createStreamAdmission({ identity: options.identity, authorize: options.authorize });
  const readPolicy = options.canRead ? createReadPolicy(options.canRead, options.authorizationClass) : undefined;
  /** The peer of each LRS stream, by the node of its first request (the object the LRS sink keeps). */
  const lrsPeers = new WeakMap<Node, PeerIdentity>();
  return {
    admit,
    readAccess: (identity) => readPolicy?.accessFor(identity),
    changed() {
      if (!readPolicy) return false;
      readPolicy.changed();
      return true;
    },
    lrsAdmitted(node, peer) {
      if (node) lrsPeers.set(node, peer);
    },
    readableClusters(node, clusterNames) {
      const peer = node && lrsPeers.get(node);
      if (!readPolicy || !peer) return clusterNames;
      const access = readPolicy.accessFor({ peer, node });
      return clusterNames.filter((name) => access.canRead(CDS_TYPE_URL, name));
    },
  };
}
