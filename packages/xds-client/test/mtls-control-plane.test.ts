// The client over mutual TLS against @xdskit/control-plane on 127.0.0.1, with certificates from a test CA made for
// the run. The control plane binds node ids to SPIFFE IDs: a client with its own node's certificate gets its
// configuration; one claiming another node's id is refused; one with no certificate, or a certificate of another
// CA, gets a connection error that names TLS and the cause; a rotated client certificate is presented on the next
// connection; a cluster the node may not read is a PERMISSION_DENIED watch error while the others are served.
import {
  buildCluster,
  CDS_TYPE_URL,
  createManagementServer,
  type ManagementServer,
  type PeerIdentity,
} from "@xdskit/control-plane";
import { createTestCa, issueLocalhost, type TestCa } from "@xdskit/test-pki";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ClusterUpdate, clusterResourceType, createXdsClient, type XdsClient } from "../src/index.js";
import { type PemDir, pemDir, tlsChannelCreds, writeCa } from "./fixtures/pki.js";
import { recordingWatcher, summarize, type WatchEvent } from "./support/recorder.js";

const spiffeId = (node: string) => `spiffe://xdskit.test/ns/default/sa/${node}`;

let ca: TestCa;
let dir: PemDir;
let caFile: string;
let server: ManagementServer;
/** The certificates' common names the server admitted streams with, in order. */
const admitted: string[] = [];
const clients: XdsClient[] = [];

beforeAll(async () => {
  ca = createTestCa();
  dir = pemDir();
  caFile = writeCa(dir, "ca", ca);
  server = await createManagementServer({
    tls: { ...issueLocalhost(ca), ca: ca.cert },
    identity: {
      nodeIdFromCertificate: (cert) => cert.spiffeId?.replace("spiffe://xdskit.test/ns/default/sa/", ""),
    },
    authorize: (peer: PeerIdentity) => {
      admitted.push(peer.certificate?.commonName ?? "");
      return true;
    },
    // Clusters named after a node are that node's only.
    canRead: (identity, _typeUrl, name) => !name.startsWith("node-") || name === `${identity.node?.id}-cluster`,
  });
  server.setResources([buildCluster({ name: "c1" }), buildCluster({ name: "node-b-cluster" })]);
}, 60_000);

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  admitted.length = 0;
});

afterAll(async () => {
  await server.close();
  dir.remove();
});

function clientAs(nodeId: string, identity: { certFile: string; keyFile: string } | undefined): XdsClient {
  const client = createXdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: `localhost:${server.port}`, channel_creds: tlsChannelCreds(caFile, identity) }],
      node: { id: nodeId },
    },
    env: {},
  });
  clients.push(client);
  return client;
}

async function until(events: WatchEvent<ClusterUpdate>[], count: number): Promise<WatchEvent<ClusterUpdate>[]> {
  for (let i = 0; i < 1000 && events.length < count; i++) await new Promise((r) => setTimeout(r, 10));
  return events;
}

async function watchC1(client: XdsClient): Promise<WatchEvent<ClusterUpdate>[]> {
  const w = recordingWatcher<ClusterUpdate>();
  client.watch(clusterResourceType, "c1", w);
  return until(w.events, 1);
}

function messageOf(event: WatchEvent<ClusterUpdate> | undefined): string {
  return event?.kind === "error" ? event.error.message : "";
}

describe("mTLS with node identity", () => {
  it("serves a client presenting its own node's certificate", async () => {
    const files = dir.writeCertificate("node-a", ca.issue({ commonName: "node-a", uris: [spiffeId("node-a")] }));
    const events = await watchC1(clientAs("node-a", files));
    expect(summarize(events)).toEqual([`resource:${server.typeVersion(CDS_TYPE_URL)}:c1`]);
    expect(admitted).toEqual(["node-a"]);
  });

  it("refuses a client that claims another node's id", async () => {
    const files = dir.writeCertificate("node-a", ca.issue({ commonName: "node-a", uris: [spiffeId("node-a")] }));
    const events = await watchC1(clientAs("node-b", files));
    expect(summarize(events)).toEqual(["error:UNAVAILABLE:connection"]);
    expect(messageOf(events[0])).toContain(
      `status: PERMISSION_DENIED: node "node-b" is not the node of the client certificate (${spiffeId("node-a")})`,
    );
    expect(admitted).toEqual([]);
  });

  it("tells a client without a certificate that TLS failed because the server requires one", async () => {
    const events = await watchC1(clientAs("node-a", undefined));
    expect(summarize(events)).toEqual(["error:UNAVAILABLE:connection"]);
    expect(messageOf(events[0])).toContain(
      `status: UNAVAILABLE: TLS handshake with xDS server localhost:${server.port} failed: tlsv13 alert certificate required: the server requires a client certificate (certificate_file and private_key_file)`,
    );
  });

  // Node's TLS server closes such a connection without an alert: the client sees a close right after the handshake.
  it("tells a client with another CA's certificate that TLS failed because the server did not accept it", async () => {
    const foreign = createTestCa({ commonName: "foreign CA" });
    const files = dir.writeCertificate("foreign", foreign.issue({ commonName: "node-a", uris: [spiffeId("node-a")] }));
    const events = await watchC1(clientAs("node-a", files));
    expect(summarize(events)).toEqual(["error:UNAVAILABLE:connection"]);
    expect(messageOf(events[0])).toContain(
      `status: UNAVAILABLE: TLS handshake with xDS server localhost:${server.port} failed: the server closed the connection right after the handshake: it did not accept the client certificate`,
    );
  });

  it("gets PERMISSION_DENIED for a resource its identity may not read, and the rest", async () => {
    const files = dir.writeCertificate("node-a", ca.issue({ commonName: "node-a", uris: [spiffeId("node-a")] }));
    const client = clientAs("node-a", files);
    const denied = recordingWatcher<ClusterUpdate>();
    client.watch(clusterResourceType, "node-b-cluster", denied);
    const events = await watchC1(client);
    await until(denied.events, 1);
    expect(summarize(events)).toEqual([`resource:${server.typeVersion(CDS_TYPE_URL)}:c1`]);
    expect(summarize(denied.events)).toEqual(["error:PERMISSION_DENIED:server_error"]);
    expect(messageOf(denied.events[0])).toContain("permission denied");
  });

  // Steps: (1) the client presents certificate "node-a" (files) and gets c1; (2) its files rotate to certificate
  // "node-a-rotated" (same node); (3) the server drops its connections; the client reconnects with the new files
  // and gets c1's next version; the server admitted the two streams with the two certificates, in order.
  it("presents a rotated client certificate on the next connection", async () => {
    const files = dir.writeCertificate("rotating", ca.issue({ commonName: "node-a", uris: [spiffeId("node-a")] }));
    const w = recordingWatcher<ClusterUpdate>();
    clientAs("node-a", files).watch(clusterResourceType, "c1", w);
    expect(summarize(await until(w.events, 1))).toEqual([`resource:${server.typeVersion(CDS_TYPE_URL)}:c1`]);
    w.take();

    dir.writeCertificate("rotating", ca.issue({ commonName: "node-a-rotated", uris: [spiffeId("node-a")] }));
    server.hooks.abortConnections();
    server.setResource(buildCluster({ name: "c1", edsServiceName: "c1-v2" }));
    expect(summarize(await until(w.events, 1))).toEqual([`resource:${server.typeVersion(CDS_TYPE_URL)}:c1`]);
    expect(admitted).toEqual(["node-a", "node-a-rotated"]);
  });
}, 60_000);
