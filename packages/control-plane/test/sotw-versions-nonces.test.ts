import { Code } from "@connectrpc/connect";
import { beforeEach, describe, expect, test } from "vitest";
import {
  buildCluster,
  buildRouteConfiguration,
  CDS_TYPE_URL,
  EDS_TYPE_URL,
  type ManagementServer,
  RDS_TYPE_URL,
} from "../src/index.js";
import type { Harness } from "./ads-client.js";
import { namesOf, newestStream, setChain, shareServer } from "./util.js";

let server: ManagementServer;
let h: Harness;
shareServer((s, harness) => {
  server = s;
  h = harness;
});
beforeEach(() => setChain(server));

const nack = { code: Code.InvalidArgument, message: "bad resource" };

describe("versions and nonces", () => {
  test("are tracked per type on one stream", async () => {
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: ["cluster"] });
    const cds = await s.next();
    expect(cds.typeUrl).toBe(CDS_TYPE_URL);
    expect(cds.versionInfo).toBe(server.typeVersion(CDS_TYPE_URL));
    expect(cds.nonce).not.toBe("");

    // The EDS request carries no version nor nonce: nothing of that type was received yet.
    await s.send({ typeUrl: EDS_TYPE_URL, resourceNames: ["cluster"] });
    const eds = await s.next();
    expect(eds.typeUrl).toBe(EDS_TYPE_URL);
    expect(eds.versionInfo).toBe(server.typeVersion(EDS_TYPE_URL));
    expect(eds.versionInfo).not.toBe(cds.versionInfo);
    expect(eds.nonce).not.toBe(cds.nonce);

    // ACKing CDS after EDS was sent is not stale: the nonce is the latest of its own type.
    await s.ack(cds, ["cluster"]);
    await s.ack(eds, ["cluster"]);
    await s.none();
    const info = newestStream(server);
    expect(info?.types.map((t) => [t.typeUrl, t.lastNonce, t.ackedVersion])).toEqual([
      [CDS_TYPE_URL, cds.nonce, cds.versionInfo],
      [EDS_TYPE_URL, eds.nonce, eds.versionInfo],
    ]);
    const dispositions = server.hooks
      .requests()
      .filter((r) => r.streamId === info?.id)
      .map((r) => r.disposition);
    expect(dispositions).toEqual(["subscribe", "subscribe", "ack", "ack"]);
  });

  test("every push gets a new nonce and the type's new version", async () => {
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: RDS_TYPE_URL, resourceNames: ["route"] });
    const first = await s.next();
    await s.ack(first, ["route"]);
    const version = server.setResource(buildRouteConfiguration({ name: "route", cluster: "other" }));
    const second = await s.next();
    expect(second.versionInfo).toBe(version);
    expect(second.versionInfo).not.toBe(first.versionInfo);
    expect(second.nonce).not.toBe(first.nonce);
  });
});

describe("stale nonces", () => {
  test("a request whose nonce is not the latest of its type is ignored entirely", async () => {
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: ["cluster"] });
    const first = await s.next();
    await s.ack(first, ["cluster"]);
    server.setResources([buildCluster({ name: "cluster", edsServiceName: "x" }), buildCluster({ name: "other" })]);
    const second = await s.next();
    expect(namesOf(second)).toEqual(["cluster"]);

    // A late request on the first nonce that also asks for `other`: stale, so no response and no new subscription.
    const mark = server.hooks.mark();
    await s.ack(first, ["cluster", "other"]);
    const stale = await server.hooks.waitForRequest(undefined, { after: mark });
    expect(stale.disposition).toBe("stale");
    await s.none();
    expect(newestStream(server)?.types[0]?.resourceNames).toEqual(["cluster"]);

    // The same change on the latest nonce is taken.
    await s.ack(second, ["cluster", "other"]);
    const third = await s.next();
    expect(namesOf(third)).toEqual(["cluster", "other"]);
  });

  test("a nonce from another type does not count", async () => {
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: ["cluster"] });
    const cds = await s.next();
    await s.send({ typeUrl: EDS_TYPE_URL, resourceNames: ["cluster"] });
    const eds = await s.next();
    const mark = server.hooks.mark();
    await s.send({ typeUrl: CDS_TYPE_URL, versionInfo: cds.versionInfo, responseNonce: eds.nonce, resourceNames: [] });
    const request = await server.hooks.waitForRequest(undefined, { after: mark });
    expect(request.disposition).toBe("stale");
    expect(newestStream(server)?.types[0]?.resourceNames).toEqual(["cluster"]);
  });
});

describe("NACK", () => {
  test("is recorded and never brings the same version again (incremental type)", async () => {
    const s = h.sotw();
    const mark = server.hooks.mark();
    await s.send({ node: { id: "n" }, typeUrl: RDS_TYPE_URL, resourceNames: ["route"] });
    const first = await s.next();
    await s.send({ typeUrl: RDS_TYPE_URL, responseNonce: first.nonce, resourceNames: ["route"], errorDetail: nack });
    await s.none(250);
    const request = await server.hooks.waitForRequest((r) => r.disposition === "nack", { after: mark });
    expect(request.errorDetail?.message).toBe("bad resource");
    expect(request.errorDetail?.code).toBe(Code.InvalidArgument);
    expect(newestStream(server)?.types[0]?.nack?.message).toBe("bad resource");

    // A new version is sent, and its ACK clears the NACK.
    server.setResource(buildRouteConfiguration({ name: "route", cluster: "fixed" }));
    const fixed = await s.next();
    expect(fixed.versionInfo).not.toBe(first.versionInfo);
    await s.ack(fixed, ["route"]);
    await server.hooks.waitForRequest((r) => r.disposition === "ack" && r.responseNonce === fixed.nonce, {
      after: mark,
    });
    expect(newestStream(server)?.types[0]?.nack).toBeUndefined();
  });

  test("is never answered with the same version of a full-state type", async () => {
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: ["cluster"] });
    const first = await s.next();
    await s.send({ typeUrl: CDS_TYPE_URL, responseNonce: first.nonce, resourceNames: ["cluster"], errorDetail: nack });
    await s.none(250);
  });

  test("that subscribes to more names gets only the new names of an incremental type", async () => {
    server.setResource(buildRouteConfiguration({ name: "route2", cluster: "cluster" }));
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: RDS_TYPE_URL, resourceNames: ["route"] });
    const first = await s.next();
    await s.send({
      typeUrl: RDS_TYPE_URL,
      responseNonce: first.nonce,
      resourceNames: ["route", "route2"],
      errorDetail: nack,
    });
    const second = await s.next();
    expect(namesOf(second)).toEqual(["route2"]);
    await s.none();
  });
});

describe("streams", () => {
  test("a new stream starts from nothing: the client gets everything it subscribes to again", async () => {
    const a = h.sotw();
    await a.send({ node: { id: "n" }, typeUrl: RDS_TYPE_URL, resourceNames: ["route"] });
    const first = await a.next();
    await a.ack(first, ["route"]);
    a.close();
    expect(await a.ended()).toBeUndefined();

    const b = h.sotw();
    // A reconnecting client sends the version it holds, and no nonce.
    await b.send({
      node: { id: "n" },
      typeUrl: RDS_TYPE_URL,
      versionInfo: first.versionInfo,
      resourceNames: ["route"],
    });
    const again = await b.next();
    expect(namesOf(again)).toEqual(["route"]);
    expect(again.versionInfo).toBe(first.versionInfo);
  });
});
