// `npm run certs [-- --xds host:port]`: the example's certificates and the two bootstraps that name them.
// A CA, the server's identity (SPIFFE ID spiffe://mesh.example/ns/default/sa/hello-server) and the client's
// (spiffe://mesh.example/ns/default/sa/hello-client), made by the repository's test PKI into certs/: a real mesh
// gets them from its CA (SPIFFE, cert-manager, a cloud's CA service), written to the same kind of files. Each
// bootstrap names its files as a `file_watcher` certificate provider instance called `mesh`, which is what the
// resources in serve/ refer to: the control plane picks which identity and roots a connection uses, never the keys.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createTestCa, writeCertificate } from "@xdskit/test-pki";

const SERVER_ID = "spiffe://mesh.example/ns/default/sa/hello-server";
const CLIENT_ID = "spiffe://mesh.example/ns/default/sa/hello-client";

const { values } = parseArgs({ options: { xds: { type: "string", default: "127.0.0.1:18001" } } });
const dir = resolve("certs");
mkdirSync(dir, { recursive: true });
const ca = createTestCa({ commonName: "mesh.example CA" });
const caFile = writeCertificate(dir, "ca", ca).certFile;
const server = writeCertificate(
  dir,
  "server",
  ca.issue({ commonName: "hello-server", ipAddresses: ["127.0.0.1"], uris: [SERVER_ID] }),
);
const client = writeCertificate(dir, "client", ca.issue({ commonName: "hello-client", uris: [CLIENT_ID] }));

function bootstrap(node: string, files: { certFile: string; keyFile: string }) {
  return {
    xds_servers: [{ server_uri: values.xds, channel_creds: [{ type: "insecure" }] }],
    node: { id: node },
    server_listener_resource_name_template: "grpc/server?xds.resource.listening_address=%s",
    certificate_providers: {
      mesh: {
        plugin_name: "file_watcher",
        config: {
          certificate_file: files.certFile,
          private_key_file: files.keyFile,
          ca_certificate_file: caFile,
          refresh_interval: "60s",
        },
      },
    },
  };
}

writeFileSync(join(dir, "server-bootstrap.json"), `${JSON.stringify(bootstrap("hello-server", server), null, 2)}\n`);
writeFileSync(join(dir, "client-bootstrap.json"), `${JSON.stringify(bootstrap("hello-client", client), null, 2)}\n`);
process.stdout.write(
  `wrote certs/: ca.pem, server.pem (${SERVER_ID}), client.pem (${CLIENT_ID}), and the bootstraps\n`,
);
