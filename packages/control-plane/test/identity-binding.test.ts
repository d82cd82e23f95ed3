// Node identity over mTLS, on real HTTP/2 with certificates from a test CA: the node a stream claims must be the one
// its client certificate maps to (here through its SPIFFE ID), checked at the first request, before anything is
// sent; `authorize` sees the verified certificate and the claimed node; a stream cannot change its node later; the
// LRS sink applies the same check.
import { X509Certificate } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { createTestCa, issueLocalhost, type TestCa, type TestCertificate } from "@xdskit/test-pki";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  buildCluster,
  CDS_TYPE_URL,
  createManagementServer,
  type ManagementServer,
  type PeerCertificate,
  type PeerIdentity,
} from "../src/index.js";
import { createHarness, type Harness, openDelta, openSotw } from "./ads-client.js";
import { clientTls, openLrsStream, tlsAdsClient } from "./tls-support.js";
import { namesOf } from "./util.js";

const SPIFFE_A = "spiffe://xdskit.test/ns/default/sa/node-a";
const nodeBySpiffeId = new Map([[SPIFFE_A, "node-a"]]);

let ca: TestCa;
let certA: TestCertificate;
let unmapped: TestCertificate;
let server: ManagementServer;
const seen: { peer: PeerIdentity; nodeId: string | undefined }[] = [];
const aborts: (() => void)[] = [];

beforeAll(async () => {
  ca = createTestCa();
  certA = ca.issue({ commonName: "node-a", uris: [SPIFFE_A], dnsNames: ["node-a.xdskit.test"] });
  unmapped = ca.issue({ commonName: "stranger", uris: ["spiffe://xdskit.test/ns/default/sa/stranger"] });
  server = await createManagementServer({
    tls: { ...issueLocalhost(ca), ca: ca.cert },
    identity: { nodeIdFromCertificate: (cert) => nodeBySpiffeId.get(cert.spiffeId ?? "") },
    authorize: (peer, node) => {
      seen.push({ peer, nodeId: node?.id });
      return node?.cluster === "quarantined" ? { deny: "cluster quarantined is not served" } : true;
    },
  });
  server.setResources([buildCluster({ name: "shared" })]);
  server.forNode("node-b").setResources([buildCluster({ name: "secret-of-b" })]);
}, 60_000);

afterEach(() => {
  for (const abort of aborts.splice(0)) abort();
  seen.length = 0;
});

afterAll(() => server.close());

function sotwAs(identity: TestCertificate) {
  const stream = openSotw(tlsAdsClient(server, clientTls(ca, identity)));
  aborts.push(() => stream.abort());
  return stream;
}

describe("a stream's node is bound to its client certificate", () => {
  it("serves the node the certificate names, in SotW and delta", async () => {
    const sotw = sotwAs(certA);
    await sotw.send({ node: { id: "node-a" }, typeUrl: CDS_TYPE_URL, resourceNames: [] });
    expect(namesOf(await sotw.next(10_000))).toEqual(["shared"]);

    const delta = openDelta(tlsAdsClient(server, clientTls(ca, certA)));
    aborts.push(() => delta.abort());
    await delta.send({ node: { id: "node-a" }, typeUrl: CDS_TYPE_URL });
    expect((await delta.next(10_000)).resources.map((r) => r.name)).toEqual(["shared"]);
  });

  it("refuses another node's id with PERMISSION_DENIED before sending anything", async () => {
    const before = server.hooks.mark();
    const stream = sotwAs(certA);
    await stream.send({ node: { id: "node-b" }, typeUrl: CDS_TYPE_URL, resourceNames: [] }).catch(() => {});
    const error = await stream.ended(10_000);
    expect([error?.code, error?.rawMessage]).toEqual([
      Code.PermissionDenied,
      `node "node-b" is not the node of the client certificate (${SPIFFE_A})`,
    ]);
    expect(stream.buffered).toEqual([]);
    const opened = server.hooks.history().find((e) => e.seq > before && e.type === "stream-open");
    const events = server.hooks.history().filter((e) => e.streamId === opened?.streamId);
    expect(events.map((e) => (e.type === "stream-close" ? [e.type, e.reason, e.code] : [e.type]))).toEqual([
      ["stream-open"],
      ["stream-close", "unauthorized", Code.PermissionDenied],
    ]);
    // The identity check comes first: the authorize hook never saw the stream.
    expect(seen).toEqual([]);
  });

  it("refuses a certificate that maps to no node, and a first request without a node", async () => {
    const stranger = sotwAs(unmapped);
    await stranger.send({ node: { id: "node-a" }, typeUrl: CDS_TYPE_URL, resourceNames: [] }).catch(() => {});
    const strangerError = await stranger.ended(10_000);
    expect([strangerError?.code, strangerError?.rawMessage]).toEqual([
      Code.PermissionDenied,
      "the client certificate (spiffe://xdskit.test/ns/default/sa/stranger) is not the certificate of any node",
    ]);

    const anonymous = sotwAs(certA);
    await anonymous.send({ typeUrl: CDS_TYPE_URL, resourceNames: [] }).catch(() => {});
    const anonymousError = await anonymous.ended(10_000);
    expect([anonymousError?.code, anonymousError?.rawMessage]).toEqual([
      Code.PermissionDenied,
      "the first request carries no node",
    ]);
    expect(stranger.buffered).toEqual([]);
    expect(anonymous.buffered).toEqual([]);
  });

  it("shows authorize the verified certificate and the claimed node, and sends its reason for refusing", async () => {
    const stream = sotwAs(certA);
    await stream
      .send({ node: { id: "node-a", cluster: "quarantined" }, typeUrl: CDS_TYPE_URL, resourceNames: [] })
      .catch(() => {});
    const error = await stream.ended(10_000);
    expect([error?.code, error?.rawMessage]).toEqual([Code.PermissionDenied, "cluster quarantined is not served"]);
    expect(seen).toHaveLength(1);
    const { peer, nodeId } = seen[0]!;
    expect(nodeId).toBe("node-a");
    expect(peer.tls).toBe(true);
    expect(peer.address).toMatch(/^127\.0\.0\.1:\d+$/);
    const cert = peer.certificate as PeerCertificate;
    expect({
      subject: cert.subject,
      commonName: cert.commonName,
      issuer: cert.issuer,
      uris: cert.uris,
      dnsNames: cert.dnsNames,
      spiffeId: cert.spiffeId,
    }).toEqual({
      subject: "CN=node-a",
      commonName: "node-a",
      issuer: `CN=${ca.commonName}`,
      uris: [SPIFFE_A],
      dnsNames: ["node-a.xdskit.test"],
      spiffeId: SPIFFE_A,
    });
    const issued = new X509Certificate(certA.cert);
    expect([cert.fingerprint256, cert.serialNumber]).toEqual([issued.fingerprint256, issued.serialNumber]);
    expect(Buffer.from(cert.raw).equals(issued.raw)).toBe(true);
  });

  it("applies the same check to LRS streams", async () => {
    const { responses, abort } = openLrsStream(
      `https://localhost:${server.port}`,
      { id: "node-b" },
      clientTls(ca, certA),
    );
    aborts.push(abort);
    await expect(responses.next()).rejects.toMatchObject({
      code: Code.PermissionDenied,
      rawMessage: `node "node-b" is not the node of the client certificate (${SPIFFE_A})`,
    });
    expect(server.lrs.streams()).toEqual([]);
  });
});

describe("a stream's node is fixed by its first request", () => {
  let plain: ManagementServer;
  let h: Harness;
  beforeAll(async () => {
    plain = await createManagementServer();
    plain.setResources([buildCluster({ name: "shared" })]);
    h = createHarness(plain.url);
  });
  afterEach(() => h.cleanup());
  afterAll(() => plain.close());

  it("takes the same node again (as Envoy sends it on every request), and refuses another one", async () => {
    const stream = h.sotw();
    await stream.send({ node: { id: "n1", cluster: "c" }, typeUrl: CDS_TYPE_URL, resourceNames: ["shared"] });
    const first = await stream.next(10_000);
    await stream.send({
      node: { id: "n1", cluster: "c" },
      typeUrl: CDS_TYPE_URL,
      versionInfo: first.versionInfo,
      responseNonce: first.nonce,
      resourceNames: ["shared"],
    });
    await stream.send({ node: { id: "n2", cluster: "c" }, typeUrl: CDS_TYPE_URL, resourceNames: [] }).catch(() => {});
    const error = await stream.ended(10_000);
    expect([error?.code, error?.rawMessage]).toEqual([
      Code.InvalidArgument,
      'a stream cannot change its node (from "n1" to "n2")',
    ]);
    const closes = plain.hooks.history().filter((e) => e.type === "stream-close");
    expect(closes.map((e) => e.type === "stream-close" && e.reason)).toEqual(["invalid-request"]);
  });

  it("refuses a node that comes after a first request without one", async () => {
    const stream = h.sotw();
    await stream.send({ typeUrl: CDS_TYPE_URL, resourceNames: ["shared"] });
    await stream.next(10_000);
    await stream.send({ node: { id: "n1" }, typeUrl: CDS_TYPE_URL, resourceNames: [] }).catch(() => {});
    const error = await stream.ended(10_000);
    expect([error?.code, error?.rawMessage]).toEqual([
      Code.InvalidArgument,
      "a stream's node goes in its first request: a later request cannot set it",
    ]);
  });
});
