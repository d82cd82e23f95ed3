// The default way to reach a gRPC server (an LRS server, a backend's ORCA service): connect-node's gRPC transport
// over HTTP/2 on the bridge's own session manager (session-manager.ts: an error listener on every session for its
// whole life), so closing it closes the connection.
import { readFileSync } from "node:fs";
import type { Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { ChannelCredentials } from "./load-store.js";
import { createSessionManager } from "./session-manager.js";

export interface OwnedTransport {
  readonly transport: Transport;
  close(): void;
}

/** `host:port`, `dns:///host:port`, `[::1]:port` or an http(s) URL, as a base URL. */
export function baseUrlOf(serverUri: string, credentials?: ChannelCredentials): string {
  if (/^https?:\/\//.test(serverUri)) return serverUri;
  const target = serverUri.replace(/^dns:(\/\/[^/]*\/)?/, "");
  return `${credentials?.type === "tls" ? "https" : "http"}://${target}`;
}

export function createOwnedTransport(serverUri: string, credentials?: ChannelCredentials): OwnedTransport {
  const baseUrl = baseUrlOf(serverUri, credentials);
  const pem = (path: string | undefined) => (path === undefined ? undefined : readFileSync(path));
  const tls =
    credentials?.type === "tls"
      ? {
          ...(credentials.caCertificateFile === undefined ? {} : { ca: pem(credentials.caCertificateFile) }),
          ...(credentials.certificateFile === undefined ? {} : { cert: pem(credentials.certificateFile) }),
          ...(credentials.privateKeyFile === undefined ? {} : { key: pem(credentials.privateKeyFile) }),
        }
      : {};
  const sessionManager = createSessionManager({ baseUrl, sessionOptions: tls });
  return { transport: createGrpcTransport({ baseUrl, sessionManager }), close: () => sessionManager.abort() };
}
