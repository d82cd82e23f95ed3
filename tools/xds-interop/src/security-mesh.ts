// The shared ground of the PSM security cases: one control plane, a mesh CA and another CA, each identity's
// certificate and key written to files for a `file_watcher` certificate provider, and the bootstrap both sides use
// (one provider instance per identity: `server`, `client`, `foreign`, the last from the other CA).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { createTestCa, writeCertificate } from "@xdskit/test-pki";
import type { BootstrapConfig } from "@xdskit/xds-client";

export const SERVER_ID = "spiffe://td.example/ns/default/sa/server";
export const CLIENT_ID = "spiffe://td.example/ns/default/sa/client";
export const SERVER_LISTENER_TEMPLATE = "grpc/server?xds.resource.listening_address=%s";
/** grpc-js-xds 1.14 refuses a bootstrap node without a locality. */
const NODE_LOCALITY = { region: "local", zone: "z" };

export interface SecurityMesh {
  readonly controlPlane: ManagementServer;
  /** The bootstrap of node `nodeId`, its xDS server with `serverFeatures`. */
  bootstrap(nodeId: string, serverFeatures?: readonly string[]): BootstrapConfig;
  /** The name of the Listener a server bound to 127.0.0.1:`port` watches. */
  serverListenerName(port: number): string;
  close(): Promise<void>;
}

export async function createSecurityMesh(): Promise<SecurityMesh> {
  const dir = mkdtempSync(join(tmpdir(), "xds-security-interop-"));
  const ca = createTestCa({ commonName: "mesh CA" });
  const foreign = createTestCa({ commonName: "another CA" });
  const caFile = writeCertificate(dir, "ca", ca).certFile;
  const serverFiles = writeCertificate(
    dir,
    "server",
    ca.issue({ commonName: "server", dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"], uris: [SERVER_ID] }),
  );
  const clientFiles = writeCertificate(dir, "client", ca.issue({ commonName: "client", uris: [CLIENT_ID] }));
  const foreignFiles = writeCertificate(dir, "foreign", foreign.issue({ commonName: "client", uris: [CLIENT_ID] }));
  const provider = (files: { certFile: string; keyFile: string }) => ({
    plugin_name: "file_watcher",
    // grpc-js-xds 1.14 requires refresh_interval (gRPC's default is 10 minutes).
    config: {
      certificate_file: files.certFile,
      private_key_file: files.keyFile,
      ca_certificate_file: caFile,
      refresh_interval: "600s",
    },
  });
  let controlPlane: ManagementServer;
  try {
    controlPlane = await createManagementServer();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    controlPlane,
    bootstrap: (nodeId, serverFeatures = []) =>
      ({
        xds_servers: [
          { server_uri: controlPlane.address, channel_creds: [{ type: "insecure" }], server_features: serverFeatures },
        ],
        node: { id: nodeId, locality: NODE_LOCALITY },
        server_listener_resource_name_template: SERVER_LISTENER_TEMPLATE,
        certificate_providers: {
          server: provider(serverFiles),
          client: provider(clientFiles),
          foreign: provider(foreignFiles),
        },
      }) as unknown as BootstrapConfig,
    serverListenerName: (port) => SERVER_LISTENER_TEMPLATE.replace("%s", `127.0.0.1:${port}`),
    async close() {
      await controlPlane.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
