// TLS and mTLS on the management server over real HTTP/2 on 127.0.0.1, with certificates made by a test CA: PEM
// text or files, certificate reload for new connections (on demand and by watching the files), a broken rotation
// that keeps the previous certificate, client certificates required or optional, and LRS and extra connect services
// on the same port behind the same TLS.
import { writeFileSync } from "node:fs";
import { create } from "@bufbuild/protobuf";
import { Code, type ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  ClientStatusDiscoveryService,
  ClientStatusResponseSchema,
} from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import { createTestCa, issueLocalhost, type TestCa, type TestCertificate, writeCertificate } from "@xdskit/test-pki";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildCluster, CDS_TYPE_URL, createManagementServer, type ManagementServer } from "../src/index.js";
import { openSotw } from "./ads-client.js";
import {
  clientTls,
  openLrsStream,
  recordingLogger,
  serialOf,
  servedSerial,
  tempDir,
  tlsAdsClient,
} from "./tls-support.js";
import { namesOf } from "./util.js";

let ca: TestCa;
let otherCa: TestCa;
/** A localhost certificate; issuing the first one makes the leaf key the CA shares (RSA: seconds on a busy machine). */
let localhost: TestCertificate;
/** A localhost certificate with a key of its own, for the certificate/key mismatches. */
let freshlyKeyed: TestCertificate;
const servers: ManagementServer[] = [];
const aborts: (() => void)[] = [];
let dir: ReturnType<typeof tempDir>;

// Every RSA key the file needs is made here, once, with a budget for a busy machine: the tests themselves only sign.
beforeAll(() => {
  ca = createTestCa();
  otherCa = createTestCa({ commonName: "another CA" });
  localhost = issueLocalhost(ca);
  freshlyKeyed = issueLocalhost(ca, "rotated", { freshKey: true });
  dir = tempDir();
}, 120_000);

afterEach(async () => {
  for (const abort of aborts.splice(0)) abort();
  for (const server of servers.splice(0)) await server.close();
});

afterAll(() => dir.remove());

async function serve(options: Parameters<typeof createManagementServer>[0]): Promise<ManagementServer> {
  const server = await createManagementServer(options);
  servers.push(server);
  server.setResources([buildCluster({ name: "c1" })]);
  return server;
}

/** Opens a SotW CDS stream with the client's TLS options, subscribed to c1. */
function openClusters(server: ManagementServer, tls: Parameters<typeof tlsAdsClient>[1]) {
  const stream = openSotw(tlsAdsClient(server, tls));
  aborts.push(() => stream.abort());
  stream.send({ node: { id: "n1" }, typeUrl: CDS_TYPE_URL, resourceNames: ["c1"] }).catch(() => {});
  return stream;
}

/** The names in the first response to a CDS stream with the client's TLS options. */
async function fetchClusters(server: ManagementServer, tls: Parameters<typeof tlsAdsClient>[1]): Promise<string[]> {
  return namesOf(await openClusters(server, tls).next(10_000));
}

/** How a CDS stream with the client's TLS options ended, with no response. */
async function refusal(server: ManagementServer, tls: Parameters<typeof tlsAdsClient>[1]) {
  const stream = openClusters(server, tls);
  const error = await stream.ended(10_000);
  expect(stream.buffered).toEqual([]);
  return error;
}

function causeCode(error: ConnectError | undefined): unknown {
  return (error?.cause as { code?: unknown } | undefined)?.code;
}

describe("TLS", () => {
  it("serves a client that trusts the CA, with the certificate given as PEM text", async () => {
    const server = await serve({ tls: localhost });
    expect(server.url).toBe(`https://${server.address}`);
    expect(await fetchClusters(server, clientTls(ca))).toEqual(["c1"]);
  });

  it("fails the handshake of a client that does not trust the CA", async () => {
    const server = await serve({ tls: localhost });
    const error = await refusal(server, clientTls(otherCa));
    expect(causeCode(error)).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
    expect(server.hooks.history().filter((e) => e.type === "stream-open")).toHaveLength(0);
  });

  it("refuses options that cannot work, naming them", async () => {
    const { cert, key } = localhost;
    await expect(createManagementServer({ tls: { cert, certFile: "/x", key } })).rejects.toThrow(
      "tls: give cert or certFile, not both",
    );
    await expect(createManagementServer({ tls: { cert } })).rejects.toThrow("its key (key or keyFile) are needed");
    await expect(createManagementServer({ tls: { cert, key, requireClientCert: true } })).rejects.toThrow(
      "tls.requireClientCert needs the CA",
    );
    await expect(createManagementServer({ tls: { certFile: `${dir.path}/missing.pem`, key } })).rejects.toThrow(
      `tls.certFile: cannot read ${dir.path}/missing.pem`,
    );
    await expect(createManagementServer({ tls: { cert, key: freshlyKeyed.key } })).rejects.toThrow(
      "tls: the certificate, key and CA do not make a TLS context",
    );
    await expect(createManagementServer({ identity: { nodeIdFromCertificate: () => "n" } })).rejects.toThrow(
      "identity binds nodes to client certificates: it needs tls with a CA",
    );
  });
});

describe("certificate reload", () => {
  // Steps: (1) serve cert A from files; (2) open a stream over a connection made with A; (3) write cert B over the
  // files and reload; (4) a new connection gets B; (5) the stream opened before still gets updates.
  it("serves a rotated certificate to new connections and keeps the open ones", async () => {
    const first = issueLocalhost(ca);
    const files = writeCertificate(dir.path, "reload", first);
    const server = await serve({ tls: { certFile: files.certFile, keyFile: files.keyFile, refreshIntervalMs: 0 } });
    expect(await servedSerial(server.port)).toBe(serialOf(first));
    const stream = openClusters(server, clientTls(ca));
    const response = await stream.next(10_000);
    expect(namesOf(response)).toEqual(["c1"]);
    await stream.ack(response, ["c1"]);

    const second = issueLocalhost(ca, "rotated");
    writeCertificate(dir.path, "reload", second);
    expect(await server.reloadTls()).toBe(true);
    expect(await servedSerial(server.port)).toBe(serialOf(second));
    expect(await server.reloadTls()).toBe(false);

    server.setResource(buildCluster({ name: "c1" }), { force: true });
    const update = await stream.next(10_000);
    expect([namesOf(update), update.versionInfo]).toEqual([["c1"], server.typeVersion(CDS_TYPE_URL)]);
  });

  it("notices rotated files by itself", async () => {
    const first = issueLocalhost(ca);
    const files = writeCertificate(dir.path, "watched", first);
    const server = await serve({ tls: { certFile: files.certFile, keyFile: files.keyFile } });
    expect(await servedSerial(server.port)).toBe(serialOf(first));
    const second = issueLocalhost(ca, "rotated");
    writeCertificate(dir.path, "watched", second);
    let served = "";
    for (let i = 0; i < 200 && served !== serialOf(second); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      served = await servedSerial(server.port);
    }
    expect(served).toBe(serialOf(second));
  });

  it("keeps the previous certificate when the new files do not fit together, and says why", async () => {
    const first = issueLocalhost(ca);
    const files = writeCertificate(dir.path, "half", first);
    const log = recordingLogger();
    const server = await serve({
      tls: { certFile: files.certFile, keyFile: files.keyFile, refreshIntervalMs: 0 },
      logger: log,
    });
    // A rotation half done: the new certificate, the old key.
    writeFileSync(files.certFile, freshlyKeyed.cert);
    expect(await server.reloadTls()).toBe(false);
    expect(await servedSerial(server.port)).toBe(serialOf(first));
    // Said by the reload asked for here, and possibly again by the file watcher that saw the same write.
    const errors = log.lines.filter((line) => line.startsWith("error"));
    expect(errors.length).toBeGreaterThanOrEqual(1);
    for (const line of errors) {
      expect(line).toMatch(
        /^error \[control-plane\] TLS reload failed, keeping the previous certificate: .*half\.pem, .*half-key\.pem do not make a TLS context: .*key values mismatch/,
      );
    }
  });

  it("reads the files again when it starts again", async () => {
    const first = issueLocalhost(ca);
    const files = writeCertificate(dir.path, "restart", first);
    const server = await serve({ tls: { certFile: files.certFile, keyFile: files.keyFile, refreshIntervalMs: 0 } });
    await server.stop();
    const second = issueLocalhost(ca, "rotated");
    writeCertificate(dir.path, "restart", second);
    await server.start();
    expect(await servedSerial(server.port)).toBe(serialOf(second));
  });
});

describe("mTLS", () => {
  it("requires a client certificate the CA signed", async () => {
    const server = await serve({ tls: { ...issueLocalhost(ca), ca: ca.cert } });
    expect(await fetchClusters(server, clientTls(ca, ca.issue({ commonName: "n1" })))).toEqual(["c1"]);

    const none = await refusal(server, clientTls(ca));
    expect(causeCode(none)).toBe("ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED");
    // TLS 1.3: the client is done with the handshake when the server rejects its certificate, so connect-node sees
    // the connection go away (the client's transport turns that into a TLS error: see the client's tests).
    expect(await refusal(server, clientTls(ca, otherCa.issue({ commonName: "n1" })))).toBeDefined();
    expect(server.hooks.history().filter((e) => e.type === "stream-open")).toHaveLength(1);
  });

  it("with requireClientCert false, serves a client without a certificate and refuses one whose certificate does not verify", async () => {
    const server = await serve({ tls: { ...issueLocalhost(ca), ca: ca.cert, requireClientCert: false } });
    expect(await fetchClusters(server, clientTls(ca))).toEqual(["c1"]);

    const foreign = await refusal(server, clientTls(ca, otherCa.issue({ commonName: "n1" })));
    expect([foreign?.code, foreign?.rawMessage]).toEqual([
      Code.Unauthenticated,
      "the client certificate did not verify: UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    ]);
    const closes = server.hooks.history().filter((e) => e.type === "stream-close");
    expect(closes.map((e) => e.type === "stream-close" && [e.reason, e.code])).toEqual([
      ["unauthorized", Code.Unauthenticated],
    ]);
  });

  it("puts the LRS sink and extra connect services behind the same TLS", async () => {
    const server = await serve({
      tls: { ...issueLocalhost(ca), ca: ca.cert, requireClientCert: false },
      routes: (router) =>
        router.service(ClientStatusDiscoveryService, {
          fetchClientStatus: () => create(ClientStatusResponseSchema, {}),
        }),
    });
    const transport = (identity?: ReturnType<TestCa["issue"]>) =>
      createGrpcTransport({ baseUrl: `https://localhost:${server.port}`, nodeOptions: clientTls(ca, identity) });

    const csds = createClient(ClientStatusDiscoveryService, transport(ca.issue({ commonName: "admin" })));
    expect((await csds.fetchClientStatus({})).config).toEqual([]);
    const refused = createClient(ClientStatusDiscoveryService, transport(otherCa.issue({ commonName: "admin" })));
    await expect(refused.fetchClientStatus({})).rejects.toMatchObject({ code: Code.Unauthenticated });

    const lrs = openLrsStream(
      `https://localhost:${server.port}`,
      { id: "n1" },
      clientTls(ca, ca.issue({ commonName: "n1" })),
    );
    aborts.push(lrs.abort);
    const responses = lrs.responses;
    const first = await responses.next();
    expect(first.done).toBe(false);
    expect(server.lrs.streams().map((s) => s.nodeId)).toEqual(["n1"]);
  }, 60_000); // four TLS connections: 7 s in npm test with the machine busy
});

describe("limits over TLS", () => {
  it("end a stream past a limit with the limit's status, as in cleartext", async () => {
    const server = await serve({ tls: localhost, maxResourceNamesPerType: 2 });
    const stream = openSotw(tlsAdsClient(server, clientTls(ca)));
    aborts.push(() => stream.abort());
    await stream.send({ node: { id: "n1" }, typeUrl: CDS_TYPE_URL, resourceNames: ["a", "b", "c"] }).catch(() => {});
    const error = await stream.ended(10_000);
    expect([error?.code, error?.rawMessage]).toEqual([
      Code.ResourceExhausted,
      `DiscoveryRequest for ${CDS_TYPE_URL} names 3 resources, more than maxResourceNamesPerType (2)`,
    ]);
  });
});

describe("cleartext", () => {
  it("on loopback, logs no warning", async () => {
    const log = recordingLogger();
    const server = await serve({ logger: log });
    await server.restart();
    expect(log.lines.filter((line) => line.startsWith("warn"))).toEqual([]);
  });
});
