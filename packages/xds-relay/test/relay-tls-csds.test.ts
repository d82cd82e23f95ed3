// The relay over TLS at both ends, and its CSDS, over real HTTP/2: the upstream control plane takes only mTLS with
// the relay's certificate (its node bound to it); the relay serves its clients TLS with a certificate of its own;
// its CSDS, on the same port, reports what its upstream client holds.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { buildCluster } from "@xdskit/control-plane";
import { ClientStatusDiscoveryService } from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import { createTestCa, issueLocalhost, type TestCa, type TestCertificate, writeCertificate } from "@xdskit/test-pki";
import { clusterResourceType, createXdsClient } from "@xdskit/xds-client";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { closeAll, startRelay, startUpstream, watch } from "./support/harness.js";

let ca: TestCa;
let dir: string;
let caFile: string;
let relayIdentity: { certFile: string; keyFile: string };
let serverCertificate: TestCertificate;

// Keys are made once, before the test: RSA key generation is slow on a loaded machine.
beforeAll(() => {
  ca = createTestCa();
  dir = mkdtempSync(join(tmpdir(), "xdskit-relay-tls-"));
  caFile = join(dir, "ca.pem");
  writeFileSync(caFile, ca.cert);
  relayIdentity = writeCertificate(dir, "relay", ca.issue({ commonName: "relay", uris: ["spiffe://t/relay"] }));
  serverCertificate = issueLocalhost(ca);
}, 120_000);
afterEach(closeAll);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("fetches over mTLS, serves over TLS, and answers CSDS with its upstream client's cache", async () => {
  const upstream = await startUpstream({
    tls: { ...serverCertificate, ca: ca.cert },
    identity: { nodeIdFromCertificate: (cert) => (cert.spiffeId === "spiffe://t/relay" ? "relay" : undefined) },
  });
  upstream.setResource(buildCluster({ name: "c1" }));
  const tlsCreds = (identity?: { certFile: string; keyFile: string }) => [
    {
      type: "tls",
      config: {
        ca_certificate_file: caFile,
        ...(identity ? { certificate_file: identity.certFile, private_key_file: identity.keyFile } : {}),
      },
    },
  ];
  const relay = await startRelay(upstream.address, {
    tls: serverCertificate,
    upstream: {
      bootstrap: {
        xds_servers: [{ server_uri: `localhost:${upstream.port}`, channel_creds: tlsCreds(relayIdentity) }],
        node: { id: "relay" },
      },
      env: {},
    },
  });
  expect(relay.url.startsWith("https://")).toBe(true);

  const client = createXdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: `localhost:${relay.port}`, channel_creds: tlsCreds() }],
      node: { id: "a" },
    },
    env: {},
  });
  let config: Awaited<ReturnType<typeof fetchStatus>>;
  const fetchStatus = async () => {
    const csds = createClient(
      ClientStatusDiscoveryService,
      createGrpcTransport({ baseUrl: `https://localhost:${relay.port}`, nodeOptions: { ca: ca.cert } }),
    );
    return (await csds.fetchClientStatus({})).config;
  };
  try {
    expect((await watch(client, clusterResourceType, "c1").nextResource()).name).toBe("c1");
    // While the client watches, the relay subscribes upstream: its CSDS shows what it holds.
    config = await fetchStatus();
  } finally {
    await client.close();
  }
  expect(config.map((c) => c.clientScope)).toEqual(["#relay"]);
  expect(config[0]?.node?.id).toBe("relay");
  expect(config[0]?.genericXdsConfigs.map((g) => [g.name, g.typeUrl])).toEqual([
    ["c1", "type.googleapis.com/envoy.config.cluster.v3.Cluster"],
  ]);
});
