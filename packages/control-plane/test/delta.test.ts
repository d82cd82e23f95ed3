import { Code } from "@connectrpc/connect";
import { describe, expect, test } from "vitest";
import {
  buildCluster,
  buildClusterLoadAssignment,
  CDS_TYPE_URL,
  EDS_TYPE_URL,
  type ManagementServer,
} from "../src/index.js";
import type { DeltaTestStream, Harness } from "./ads-client.js";
import { newestStream, shareServer } from "./util.js";

let server: ManagementServer;
let h: Harness;
shareServer((s, harness) => {
  server = s;
  h = harness;
});

const endpoints = (name: string, port = 80) =>
  buildClusterLoadAssignment({ clusterName: name, localities: [{ endpoints: [`127.0.0.1:${port}`] }] });

const names = (r: { resources: { name: string }[] }) => r.resources.map((x) => x.name);

async function ack(
  d: DeltaTestStream,
  typeUrl: string,
  nonce: string,
  extra: { resourceNamesSubscribe?: string[] } = {},
) {
  await d.send({ typeUrl, responseNonce: nonce, ...extra });
}

describe("delta ADS", () => {
  test("sends subscribed resources wrapped with name and version, and names that do not exist as removed", async () => {
    server.setResources([endpoints("e1"), endpoints("e2")]);
    const d = h.delta();
    await d.send({ node: { id: "n" }, typeUrl: EDS_TYPE_URL, resourceNamesSubscribe: ["e1", "missing"] });
    const first = await d.next();
    expect(names(first)).toEqual(["e1"]);
    expect(first.resources[0]?.version).toBe(server.typeVersion(EDS_TYPE_URL));
    expect(first.resources[0]?.resource?.typeUrl).toBe(EDS_TYPE_URL);
    expect(first.removedResources).toEqual(["missing"]);
    expect(first.systemVersionInfo).toBe(server.typeVersion(EDS_TYPE_URL));
    await ack(d, EDS_TYPE_URL, first.nonce);
    await d.none();

    // Only what changed; a removal of a held resource; the missing name appears.
    server.setResource(endpoints("e1", 81));
    const changed = await d.next();
    expect(names(changed)).toEqual(["e1"]);
    expect(changed.removedResources).toEqual([]);
    await ack(d, EDS_TYPE_URL, changed.nonce);
    server.removeResource(EDS_TYPE_URL, "e1");
    const removed = await d.next();
    expect(removed.resources).toEqual([]);
    expect(removed.removedResources).toEqual(["e1"]);
    await ack(d, EDS_TYPE_URL, removed.nonce);
    server.setResource(endpoints("missing"));
    expect(names(await d.next())).toEqual(["missing"]);
  });

  test("subscriptions change incrementally, whatever the nonce; a change waits for the ACK of the response before", async () => {
    // Steps: subscribe to e1 and get it; subscribe to e2 with no nonce: taken at once, but its response waits for the
    // client's ACK of the first one; that ACK (which also unsubscribes e1) lets it out; a change to e1 sends nothing.
    server.setResources([endpoints("e1"), endpoints("e2")]);
    const d = h.delta();
    await d.send({ node: { id: "n" }, typeUrl: EDS_TYPE_URL, resourceNamesSubscribe: ["e1"] });
    const first = await d.next();
    await d.send({ typeUrl: EDS_TYPE_URL, resourceNamesSubscribe: ["e2"] });
    await d.none();
    expect(newestStream(server).types[0]).toMatchObject({
      resourceNames: ["e1", "e2"],
      waitingFor: "ack",
      pending: true,
    });
    await d.send({ typeUrl: EDS_TYPE_URL, responseNonce: first.nonce, resourceNamesUnsubscribe: ["e1"] });
    expect(names(await d.next())).toEqual(["e2"]);
    server.setResource(endpoints("e1", 99));
    await d.none();
    expect(newestStream(server).types[0]?.resourceNames).toEqual(["e2"]);
  });

  test("initial_resource_versions: what the client already holds is not sent again", async () => {
    server.setResources([endpoints("e1"), endpoints("e2")]);
    const version = server.typeVersion(EDS_TYPE_URL);
    const d = h.delta();
    await d.send({
      node: { id: "n" },
      typeUrl: EDS_TYPE_URL,
      resourceNamesSubscribe: ["e1", "e2"],
      initialResourceVersions: { e1: version, e2: "stale" },
    });
    expect(names(await d.next())).toEqual(["e2"]);
  });

  test("wildcard: an LDS/CDS first request naming nothing, or `*`; `*` can be unsubscribed", async () => {
    server.setResources([buildCluster({ name: "c1" }), buildCluster({ name: "c2" })]);
    const d = h.delta();
    await d.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL });
    const first = await d.next();
    expect(names(first)).toEqual(["c1", "c2"]);
    await ack(d, CDS_TYPE_URL, first.nonce);
    server.setResource(buildCluster({ name: "c3" }));
    const added = await d.next();
    expect(names(added)).toEqual(["c3"]);
    await d.send({ typeUrl: CDS_TYPE_URL, responseNonce: added.nonce, resourceNamesUnsubscribe: ["*"] });
    await d.none();
    server.setResource(buildCluster({ name: "c4" }));
    await d.none();

    const e = h.delta();
    server.setResources([endpoints("e1")]);
    await e.send({ node: { id: "n" }, typeUrl: EDS_TYPE_URL, resourceNamesSubscribe: ["*"] });
    expect(names(await e.next())).toEqual(["e1"]);
  });

  test("a NACK is recorded and brings nothing again", async () => {
    server.setResources([endpoints("e1")]);
    const d = h.delta();
    const mark = server.hooks.mark();
    await d.send({ node: { id: "n" }, typeUrl: EDS_TYPE_URL, resourceNamesSubscribe: ["e1"] });
    const first = await d.next();
    await d.send({
      typeUrl: EDS_TYPE_URL,
      responseNonce: first.nonce,
      errorDetail: { code: Code.InvalidArgument, message: "no" },
    });
    await d.none(250);
    const nack = await server.hooks.waitForRequest((r) => r.disposition === "nack", { after: mark });
    expect(nack.kind).toBe("delta");
    expect(nack.errorDetail?.message).toBe("no");
  });

  test("TP3 resource errors: once, and not as a removal", async () => {
    server.setResources([endpoints("e1"), endpoints("e2")]);
    const d = h.delta();
    await d.send({ node: { id: "n" }, typeUrl: EDS_TYPE_URL, resourceNamesSubscribe: ["e1", "e2"] });
    const first = await d.next();
    await ack(d, EDS_TYPE_URL, first.nonce);
    server.setResourceError(EDS_TYPE_URL, "e1", { code: Code.PermissionDenied, message: "denied" });
    const response = await d.next();
    expect(response.resources).toEqual([]);
    expect(response.removedResources).toEqual([]);
    expect(response.resourceErrors.map((e) => [e.resourceName?.name, e.errorDetail?.code])).toEqual([
      ["e1", Code.PermissionDenied],
    ]);
    await ack(d, EDS_TYPE_URL, response.nonce);
    server.setResource(endpoints("e2", 81));
    const next = await d.next();
    expect(names(next)).toEqual(["e2"]);
    expect(next.resourceErrors).toEqual([]);
  });

  test("hooks report delta requests and responses", async () => {
    server.setResources([endpoints("e1")]);
    const mark = server.hooks.mark();
    const d = h.delta();
    await d.send({ node: { id: "delta-node" }, typeUrl: EDS_TYPE_URL, resourceNamesSubscribe: ["e1", "gone"] });
    await d.next();
    const request = await server.hooks.waitForRequest((r) => r.node?.id === "delta-node", { after: mark });
    expect(request).toMatchObject({
      kind: "delta",
      disposition: "subscribe",
      subscribe: ["e1", "gone"],
      unsubscribe: [],
    });
    const response = await server.hooks.waitForResponse((r) => r.streamId === request.streamId, { after: mark });
    expect(response).toMatchObject({ kind: "delta", resourceNames: ["e1"], removedNames: ["gone"], delivery: "sent" });
  });
});
