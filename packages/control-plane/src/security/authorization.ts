import { Code } from "@connectrpc/connect";
import type { Node } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { InvalidRequestError } from "../limits.js";
import type { PeerCertificate, PeerIdentity } from "./identity.js";

/**
 * What `authorize` decides for a stream: `true` serves it; `false`, or `{ deny: reason }`, ends it with
 * PERMISSION_DENIED (and the reason) before anything is sent. Anything but `true` refuses.
 */
export type AuthorizeResult = boolean | { readonly deny: string };

/** Decides whether a stream's peer may be served as the node its first request claims. */
export type AuthorizeStream = (peer: PeerIdentity, node: Node | undefined) => AuthorizeResult;

/** Binds node ids to client certificates (mTLS): a stream may only claim the node its certificate names. */
export interface IdentityOptions {
  /**
   * The node id a verified client certificate may claim, e.g. from its SPIFFE ID, a DNS SAN or its common name;
   * undefined: none (its streams are refused).
   */
  readonly nodeIdFromCertificate: (certificate: PeerCertificate) => string | undefined;
}

/** A stream the server refuses to serve: PERMISSION_DENIED, or UNAUTHENTICATED for a certificate that did not verify. */
export class StreamRefusedError extends InvalidRequestError {}

function denied(message: string): StreamRefusedError {
  return new StreamRefusedError(message, Code.PermissionDenied);
}

function describePeer(certificate: PeerCertificate): string {
  return certificate.spiffeId ?? certificate.subject.replaceAll("\n", ", ");
}

/**
 * The check a stream passes at its first request. In order: a client certificate that did not verify is refused (UNAUTHENTICATED); with `identity`, the node must
 * be the one its certificate maps to; then `authorize`, when given, has the last word. Throws StreamRefusedError.
 */
export function createStreamAdmission(options: {
  readonly identity?: IdentityOptions | undefined;
  readonly authorize?: AuthorizeStream | undefined;
}): (peer: PeerIdentity, node: Node | undefined) => void {
  const { identity, authorize } = options;
  return (peer, node) => {
    if (peer.certificateError !== undefined) {
      throw new StreamRefusedError(
        `the client certificate did not verify: ${peer.certificateError}`,
        Code.Unauthenticated,
      );
    }
    if (identity) {
      const certificate = peer.certificate;
      if (!certificate) throw denied("this server binds nodes to client certificates, and the client presented none");
      const expected = identity.nodeIdFromCertificate(certificate);
      if (expected === undefined) {
        throw denied(`the client certificate (${describePeer(certificate)}) is not the certificate of any node`);
      }
      if (node === undefined) throw denied("the first request carries no node");
      if (node.id !== expected) {
        throw denied(`node "${node.id}" is not the node of the client certificate (${describePeer(certificate)})`);
      }
    }
    if (authorize) {
      const result = authorize(peer, node);
      if (result !== true) {
        throw denied(
          typeof result === "object" && result !== null && typeof result.deny === "string"
            ? result.deny
            : "refused by the server's authorization policy",
        );
      }
    }
  };
}
