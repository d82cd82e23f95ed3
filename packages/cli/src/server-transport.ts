// A Connect gRPC transport to one xDS server of a bootstrap: cleartext, or TLS with the files of its `tls`
// channel credentials (read when the transport is made).
import { readFile } from "node:fs/promises";
import type { Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { XdsServerConfig } from "@xdskit/xds-client";

export async function transportFor(server: XdsServerConfig): Promise<Transport> {
  // `dns:///host:port` and `dns://resolver/host:port` name the same host:port here; of an address list
  // (`ipv4:a:1,b:2`, replicas of one server) the first address.
  const authority = server.serverUri
    .replace(/^dns:\/\/[^/]*\//, "")
    .replace(/^ipv[46]:/, "")
    .split(",")[0]!;
  const creds = server.channelCredentials;
  if (creds.type === "insecure") return createGrpcTransport({ baseUrl: `http://${authority}` });
  const read = (file: string | undefined) => (file === undefined ? undefined : readFile(file));
  const [ca, cert, key] = await Promise.all([
    read(creds.caCertificateFile),
    read(creds.certificateFile),
    read(creds.privateKeyFile),
  ]);
  return createGrpcTransport({
    baseUrl: `https://${authority}`,
    nodeOptions: { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) },
  });
}
