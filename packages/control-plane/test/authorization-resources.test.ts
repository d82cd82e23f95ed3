// Per-resource read authorization (`canRead`) over real HTTP/2: a name the stream's identity may not read is, to a
// subscription naming it, a TP3 resource error with PERMISSION_DENIED (existing or not), and to a wildcard, absent;
// the rest of the subscription is served, in SotW and in delta. Streams of one authorization class share the work
// of planning their responses; `authorizationChanged()` applies a changed policy to open streams; the LRS sink names
// only readable clusters.
import { Code } from "@connectrpc/connect";
import type { DeltaDiscoveryResponse, ResourceError } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { createTestCa, issueLocalhost, type TestCa, type TestCertificate } from "@xdskit/test-pki";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  buildCluster,
  buildClusterLoadAssignment,
  CDS_TYPE_URL,
  createManagementServer,
  EDS_TYPE_URL,
  type ManagementServer,
  type StreamIdentity,
} from "../src/index.js";
import { createHarness, type Harness, openSotw } from "./ads-client.js";
import { clientTls, openLrsStream, tlsAdsClient } from "./tls-support.js";
import { namesOf } from "./util.js";

/** Team a may not read b-*, team b may not read a-*; `revoked` names nobody may read. */
const revoked = new Set<string>();
let canReadCalls = 0;
function canRead(identity: StreamIdentity, _typeUrl: string, name: string): boolean {
  canReadCalls++;
  if (revoked.has(name)) return false;
  const team = identity.node?.cluster;
  return team === "a" ? !name.startsWith("b-") : team === "b" ? !name.startsWith("a-") : name.startsWith("public-");
}

let server: ManagementServer;
let h: Harness;

beforeAll(async () => {
  server = await createManagementServer({ canRead, authorizationClass: (identity) => identity.node?.cluster ?? "" });
  h = createHarness(server.url);
});

afterEach(() => {
  h.cleanup();
  server.setSnapshot([]);
  revoked.clear();
  canReadCalls = 0;
});

afterAll(() => server.close());

const errorsOf = (response: { readonly resourceErrors: readonly ResourceError[] }) =>
  response.resourceErrors.map((e) => [e.resourceName?.name, e.errorDetail?.code]);

function setClusters(): void {
  server.setResources([buildCluster({ name: "a-1" }), buildCluster({ name: "b-1" }), buildCluster({ name: "shared" })]);
}

describe("SotW", () => {
  it("answers a denied name with PERMISSION_DENIED, existing or not, and serves the rest", async () => {
    setClusters();
    const s = h.sotw();
    await s.send({
      node: { id: "n1", cluster: "a" },
      typeUrl: CDS_TYPE_URL,
      resourceNames: ["a-1", "b-1", "b-none", "x"],
    });
    const response = await s.next();
    expect(namesOf(response)).toEqual(["a-1"]);
    expect(errorsOf(response)).toEqual([
      ["b-1", Code.PermissionDenied],
      ["b-none", Code.PermissionDenied],
    ]);
    expect(response.resourceErrors[0]?.errorDetail?.message).toBe("permission denied");
  });

  it("leaves denied resources out of a wildcard subscription", async () => {
    setClusters();
    const s = h.sotw();
    await s.send({ node: { id: "n1", cluster: "b" }, typeUrl: CDS_TYPE_URL, resourceNames: [] });
    const response = await s.next();
    expect(namesOf(response)).toEqual(["b-1", "shared"]);
    expect(response.resourceErrors).toEqual([]);
  });

  it("serves the changes of readable names only (a type that is not full-state)", async () => {
    server.setResources([
      buildClusterLoadAssignment({ clusterName: "a-1", localities: [{ endpoints: ["127.0.0.1:1"] }] }),
      buildClusterLoadAssignment({ clusterName: "b-1", localities: [{ endpoints: ["127.0.0.1:2"] }] }),
    ]);
    const s = h.sotw();
    await s.send({ node: { id: "n1", cluster: "a" }, typeUrl: EDS_TYPE_URL, resourceNames: ["a-1", "b-1"] });
    const first = await s.next();
    expect([namesOf(first), errorsOf(first)]).toEqual([["a-1"], [["b-1", Code.PermissionDenied]]]);
    await s.ack(first, ["a-1", "b-1"]);
    // A new version of the denied resource sends nothing: the client holds its denial already.
    server.setResource(
      buildClusterLoadAssignment({ clusterName: "b-1", localities: [{ endpoints: ["127.0.0.1:3"] }] }),
    );
    await s.none();
    server.setResource(
      buildClusterLoadAssignment({ clusterName: "a-1", localities: [{ endpoints: ["127.0.0.1:4"] }] }),
    );
    const second = await s.next();
    expect([namesOf(second), errorsOf(second)]).toEqual([["a-1"], []]);
  });

  // Steps: (1) team a reads a-1 and shared (by name and by wildcard on two streams); (2) shared is revoked and
  // authorizationChanged() is called; (3) the by-name stream gets a PERMISSION_DENIED error for shared, the wildcard
  // stream a full state without it.
  it("applies a changed policy to open streams", async () => {
    setClusters();
    const named = h.sotw();
    await named.send({ node: { id: "n1", cluster: "a" }, typeUrl: CDS_TYPE_URL, resourceNames: ["a-1", "shared"] });
    const before = await named.next();
    expect(namesOf(before)).toEqual(["a-1", "shared"]);
    await named.ack(before, ["a-1", "shared"]);
    const wildcard = h.sotw();
    await wildcard.send({ node: { id: "n2", cluster: "a" }, typeUrl: CDS_TYPE_URL, resourceNames: [] });
    const all = await wildcard.next();
    expect(namesOf(all)).toEqual(["a-1", "shared"]);
    await wildcard.ack(all, []);
    await server.hooks.waitForRequest((r) => r.responseNonce === all.nonce);

    revoked.add("shared");
    server.authorizationChanged();
    const named2 = await named.next();
    expect([namesOf(named2), errorsOf(named2)]).toEqual([["a-1"], [["shared", Code.PermissionDenied]]]);
    const all2 = await wildcard.next();
    expect([namesOf(all2), errorsOf(all2)]).toEqual([["a-1"], []]);
  });
});

describe("delta", () => {
  const names = (r: DeltaDiscoveryResponse) => r.resources.map((resource) => resource.name);

  it("answers a denied name with PERMISSION_DENIED and never says whether it exists", async () => {
    setClusters();
    const d = h.delta();
    await d.send({
      node: { id: "n1", cluster: "a" },
      typeUrl: CDS_TYPE_URL,
      resourceNamesSubscribe: ["a-1", "b-1", "b-none", "a-none"],
    });
    const response = await d.next();
    expect(names(response)).toEqual(["a-1"]);
    expect(errorsOf(response)).toEqual([
      ["b-1", Code.PermissionDenied],
      ["b-none", Code.PermissionDenied],
    ]);
    // A readable name that does not exist is reported as such; a denied one is not.
    expect(response.removedResources).toEqual(["a-none"]);
  });

  it("leaves denied resources out of a wildcard subscription, and removes one that gets revoked", async () => {
    setClusters();
    const d = h.delta();
    await d.send({ node: { id: "n1", cluster: "b" }, typeUrl: CDS_TYPE_URL, resourceNamesSubscribe: ["*"] });
    const first = await d.next();
    expect(names(first)).toEqual(["b-1", "shared"]);
    await d.send({ typeUrl: CDS_TYPE_URL, responseNonce: first.nonce });
    await server.hooks.waitForRequest((r) => r.responseNonce === first.nonce);
    revoked.add("shared");
    server.authorizationChanged();
    const second = await d.next();
    expect([names(second), second.removedResources, second.resourceErrors]).toEqual([[], ["shared"], []]);
  });
});

describe("LRS", () => {
  it("names to a client that cannot be told 'all clusters' only the clusters it may read", async () => {
    setClusters();
    const { responses, abort } = openLrsStream(server.url, { id: "n1", cluster: "a" });
    try {
      const first = await responses.next();
      expect(first.done ? undefined : [first.value.sendAllClusters, first.value.clusters]).toEqual([
        false,
        ["a-1", "shared"],
      ]);
    } finally {
      abort();
    }
  });
});

describe("fan-out", () => {
  // Steps: three wildcard streams, two of team a and one of team b, subscribe to the same clusters at the same
  // version. The policy is asked once per name per class (3 names x 2 classes), not once per stream.
  it("plans once per authorization class", async () => {
    setClusters();
    const streams = [
      { id: "n1", cluster: "a" },
      { id: "n2", cluster: "a" },
      { id: "n3", cluster: "b" },
    ].map((node) => ({ s: h.sotw(), ...node }));
    for (const { s, id, cluster } of streams) {
      await s.send({ node: { id, cluster }, typeUrl: CDS_TYPE_URL, resourceNames: [] });
    }
    const seen = await Promise.all(streams.map(async ({ s }) => namesOf(await s.next())));
    expect(seen).toEqual([
      ["a-1", "shared"],
      ["a-1", "shared"],
      ["b-1", "shared"],
    ]);
    expect(canReadCalls).toBe(6);
  });

  it("by default treats every identity as its own class", async () => {
    const perIdentity = await createManagementServer({ canRead });
    const client = createHarness(perIdentity.url);
    try {
      perIdentity.setResources([buildCluster({ name: "a-1" }), buildCluster({ name: "shared" })]);
      for (const id of ["n1", "n2"]) {
        const s = client.sotw();
        await s.send({ node: { id, cluster: "a" }, typeUrl: CDS_TYPE_URL, resourceNames: [] });
        expect(namesOf(await s.next())).toEqual(["a-1", "shared"]);
      }
      expect(canReadCalls).toBe(4);
    } finally {
      client.cleanup();
      await perIdentity.close();
    }
  });
});

describe("over mTLS", () => {
  let ca: TestCa;
  let localhost: TestCertificate;
  let identity: TestCertificate;
  // The CA's and the leaves' RSA keys are made here, with a budget for a busy machine: the test itself only connects.
  beforeAll(() => {
    ca = createTestCa();
    localhost = issueLocalhost(ca);
    identity = ca.issue({ commonName: "n1", uris: ["spiffe://xdskit.test/ns/blue/sa/n1"] });
  }, 120_000);

  it("sees the verified certificate in the identity", async () => {
    const namespaceOf = (identity: StreamIdentity) => identity.peer.certificate?.spiffeId?.split("/")[4];
    const secure = await createManagementServer({
      tls: { ...localhost, ca: ca.cert },
      canRead: (identity, _typeUrl, name) => name.startsWith(`${namespaceOf(identity)}-`),
      authorizationClass: (identity) => namespaceOf(identity) ?? "",
    });
    secure.setResources([buildCluster({ name: "blue-1" }), buildCluster({ name: "green-1" })]);
    const s = openSotw(tlsAdsClient(secure, clientTls(ca, identity)));
    try {
      await s.send({ node: { id: "n1" }, typeUrl: CDS_TYPE_URL, resourceNames: ["blue-1", "green-1"] });
      const response = await s.next(10_000);
      expect([namesOf(response), errorsOf(response)]).toEqual([["blue-1"], [["green-1", Code.PermissionDenied]]]);
    } finally {
      s.abort();
      await secure.close();
    }
  });
});
