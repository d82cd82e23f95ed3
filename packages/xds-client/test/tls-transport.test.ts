// The default transport over real TLS against @xdskit/control-plane on 127.0.0.1, with certificates from a test CA
// made for the run: a bootstrap `tls` credential with a CA file gets the configuration; a server it does not trust,
// or a CA file that is missing, is a connection error that names TLS (or the file), never a throw from watch(); and
// a server whose certificate rotates is reached again by a client that reconnects with a rotated CA file.
import {
  buildCluster,
  CDS_TYPE_URL,
  createManagementServer,
  type ManagementServer,
  type ServerTlsOptions,
} from "@xdskit/control-plane";
import { createTestCa, issueLocalhost, type TestCa } from "@xdskit/test-pki";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type BootstrapChannelCredentials,
  type ClusterUpdate,
  clusterResourceType,
  createXdsClient,
  type XdsClient,
} from "../src/index.js";
import { type PemDir, pemDir, tlsChannelCreds, writeCa } from "./fixtures/pki.js";
import { recordingWatcher, summarize, type WatchEvent } from "./support/recorder.js";

let ca: TestCa;
let dir: PemDir;
let caFile: string;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(() => {
  ca = createTestCa();
  dir = pemDir();
  caFile = writeCa(dir, "ca", ca);
}, 60_000);

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(() => dir.remove());

async function tlsServer(tls: ServerTlsOptions): Promise<ManagementServer> {
  const server = await createManagementServer({ tls });
  cleanups.push(() => server.close());
  server.setResources([buildCluster({ name: "c1" })]);
  return server;
}

function clientOf(serverUri: string, channelCreds: BootstrapChannelCredentials[]): XdsClient {
  const client = createXdsClient({
    bootstrap: { xds_servers: [{ server_uri: serverUri, channel_creds: channelCreds }], node: { id: "tls-node" } },
    env: {},
  });
  cleanups.push(() => client.close());
  return client;
}

/** Watches cluster c1 and waits for `count` events. */
async function watchC1(client: XdsClient, count = 1): Promise<WatchEvent<ClusterUpdate>[]> {
  const w = recordingWatcher<ClusterUpdate>();
  client.watch(clusterResourceType, "c1", w);
  for (let i = 0; i < 1000 && w.events.length < count; i++) await new Promise((r) => setTimeout(r, 10));
  return w.events;
}

function errorMessage(event: WatchEvent<ClusterUpdate> | undefined): string | undefined {
  return event?.kind === "error" || event?.kind === "ambient" ? event.error.message : undefined;
}

describe("TLS channel credentials", () => {
  it("reach a TLS control plane whose certificate the CA file trusts", async () => {
    const server = await tlsServer(issueLocalhost(ca));
    const events = await watchC1(clientOf(`localhost:${server.port}`, tlsChannelCreds(caFile)));
    expect(summarize(events)).toEqual([`resource:${server.typeVersion(CDS_TYPE_URL)}:c1`]);
  });

  it("check the certificate against an IP address target too", async () => {
    const server = await tlsServer(issueLocalhost(ca));
    const events = await watchC1(clientOf(`127.0.0.1:${server.port}`, tlsChannelCreds(caFile)));
    expect(summarize(events)).toEqual([`resource:${server.typeVersion(CDS_TYPE_URL)}:c1`]);
  });

  it("fail with a connection error naming TLS when the server's certificate is not trusted", async () => {
    const server = await tlsServer(issueLocalhost(ca));
    const events = await watchC1(clientOf(`localhost:${server.port}`, tlsChannelCreds(undefined)));
    expect(summarize(events)).toEqual(["error:UNAVAILABLE:connection"]);
    expect(errorMessage(events[0])).toBe(
      `[UNAVAILABLE] xDS channel for server localhost:${server.port}: xDS call failed with no responses received; status: UNAVAILABLE: TLS handshake with xDS server localhost:${server.port} failed: the server's certificate is not trusted: unable to verify the first certificate (node ID: tls-node)`,
    );
  });

  it("fail with a connection error naming TLS when the certificate is not for the server's name", async () => {
    const server = await tlsServer(ca.issue({ commonName: "elsewhere", dnsNames: ["elsewhere.test"] }));
    const events = await watchC1(clientOf(`localhost:${server.port}`, tlsChannelCreds(caFile)));
    expect(summarize(events)).toEqual(["error:UNAVAILABLE:connection"]);
    expect(errorMessage(events[0])).toMatch(
      /TLS handshake with xDS server localhost:\d+ failed: the server's certificate is not trusted: Hostname\/IP does not match certificate's altnames: Host: localhost\. is not in the cert's altnames: DNS:elsewhere\.test \(node ID: tls-node\)$/,
    );
  });

  it("read their files when connecting: a missing file is a connection error naming it, not a throw", async () => {
    const server = await tlsServer(issueLocalhost(ca));
    const missing = `${dir.path}/missing-ca.pem`;
    const client = clientOf(`localhost:${server.port}`, tlsChannelCreds(missing));
    const events = await watchC1(client);
    expect(summarize(events)).toEqual(["error:UNAVAILABLE:connection"]);
    expect(errorMessage(events[0])).toContain(
      `status: UNAVAILABLE: TLS handshake with xDS server localhost:${server.port} failed: cannot read the ca_certificate_file ${missing}: ENOENT`,
    );
  });
}, 60_000);

describe("server certificate rotation", () => {
  // Steps: (1) the server presents a certificate of CA 1 (files), the client trusts CA 1 (a file) and gets c1;
  // (2) the server's files rotate to a certificate of CA 2 and it reloads; the client's CA file rotates to CA 2;
  // (3) the server drops its connections: the client reconnects, verifies the new certificate against the new CA
  // file, and gets the cluster's next version. Had either side kept its old file, the handshake would fail.
  it("is observed by a client that reconnects", async () => {
    const ca2 = createTestCa({ commonName: "rotated CA" });
    const serverFiles = dir.writeCertificate("rotating-server", issueLocalhost(ca));
    const clientCa = dir.write("rotating-ca", ca.cert);
    const server = await tlsServer({ certFile: serverFiles.certFile, keyFile: serverFiles.keyFile });
    const w = recordingWatcher<ClusterUpdate>();
    clientOf(`localhost:${server.port}`, tlsChannelCreds(clientCa)).watch(clusterResourceType, "c1", w);
    for (let i = 0; i < 1000 && w.events.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
    expect(summarize(w.take())).toEqual([`resource:${server.typeVersion(CDS_TYPE_URL)}:c1`]);

    dir.writeCertificate("rotating-server", issueLocalhost(ca2));
    expect(await server.reloadTls()).toBe(true);
    dir.write("rotating-ca", ca2.cert);
    const streamsBefore = server.hooks.history().filter((e) => e.type === "stream-open").length;
    server.hooks.abortConnections();
    server.setResource(buildCluster({ name: "c1", edsServiceName: "c1-v2" }));
    for (let i = 0; i < 1000 && w.events.length < 1; i++) await new Promise((r) => setTimeout(r, 10));
    expect(summarize(w.take())).toEqual([`resource:${server.typeVersion(CDS_TYPE_URL)}:c1`]);
    expect(server.hooks.history().filter((e) => e.type === "stream-open")).toHaveLength(streamsBefore + 1);
  });
}, 60_000);
