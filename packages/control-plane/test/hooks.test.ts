import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import {
  buildCluster,
  CDS_TYPE_URL,
  EDS_TYPE_URL,
  type ManagementServer,
  type SotwRequestEvent,
} from "../src/index.js";
import type { Harness } from "./ads-client.js";
import { namesOf, newestStream, shareServer } from "./util.js";

let server: ManagementServer;
let h: Harness;
let mark: number;
shareServer((s, harness) => {
  server = s;
  h = harness;
});
beforeEach(() => {
  mark = server.hooks.mark();
  server.setResources([buildCluster({ name: "c1" }), buildCluster({ name: "c2" })]);
});
afterEach(() => {
  server.hooks.release();
  server.hooks.stopDropping();
});

/** Subscribes to CDS and ACKs the first response; returns once the server has seen the ACK. */
async function subscribed(names = ["c1"], node = { id: "hooks-node" }) {
  const before = server.hooks.mark();
  const s = h.sotw();
  await s.send({ node, typeUrl: CDS_TYPE_URL, resourceNames: names });
  const first = await s.next();
  await s.ack(first, names);
  await server.hooks.waitForRequest((r) => r.disposition === "ack" && r.responseNonce === first.nonce, {
    after: before,
  });
  return { s, first };
}

describe("observing", () => {
  test("a wait past Node's timer limit (30 days) waits, and settles on the event it waits for", async () => {
    // Node alone fires a timer of more than 2^31-1 ms after 1 ms: the wait would fail at once, timed out.
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const waiting = server.hooks.waitForStreamOpen(undefined, { after: mark, timeoutMs: 30 * 24 * 3_600_000 });
      let settled = false;
      waiting.then(
        () => (settled = true),
        () => (settled = true),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(settled).toBe(false);
      await subscribed();
      await expect(waiting).resolves.toMatchObject({ kind: "sotw" });
      expect(warnings.filter((warning) => warning.name === "TimeoutOverflowWarning")).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  test("each request and response is reported with its stream and the stream's node", async () => {
    const { s, first } = await subscribed();
    const open = await server.hooks.waitForStreamOpen(undefined, { after: mark });
    expect(open.kind).toBe("sotw");
    expect(open.peer).toMatch(/^127\.0\.0\.1:\d+$/);

    const requests = server.hooks.requests().filter((r) => r.seq > mark) as SotwRequestEvent[];
    expect(requests.map((r) => [r.streamId, r.node?.id, r.disposition, r.resourceNames])).toEqual([
      [open.streamId, "hooks-node", "subscribe", ["c1"]],
      // The ACK carries no node; the event still names the stream's node.
      [open.streamId, "hooks-node", "ack", ["c1"]],
    ]);
    expect(requests[1]?.request.node).toBeUndefined();
    expect(requests[1]?.versionInfo).toBe(first.versionInfo);

    const [response] = server.hooks.responses().filter((r) => r.seq > mark);
    expect(response).toMatchObject({
      streamId: open.streamId,
      typeUrl: CDS_TYPE_URL,
      nonce: first.nonce,
      versionInfo: first.versionInfo,
      resourceNames: ["c1"],
      errorNames: [],
      delivery: "sent",
    });
    expect(response?.node?.id).toBe("hooks-node");

    s.close();
    const closed = await server.hooks.waitForStreamClose((e) => e.streamId === open.streamId);
    expect(closed).toMatchObject({ reason: "client-closed", code: 0 });
    expect(closed.node?.id).toBe("hooks-node");
    expect(await s.ended()).toBeUndefined();
  });

  test("listeners are called in order; a throwing listener does not disturb the server", async () => {
    const seen: string[] = [];
    const offThrow = server.hooks.on("request", () => {
      throw new Error("listener bug");
    });
    const off = server.hooks.on("request", (e) => seen.push(e.disposition));
    await subscribed();
    off();
    offThrow();
    await subscribed();
    expect(seen).toEqual(["subscribe", "ack"]);
  });

  test("waitForRequest looks back from `after`, waits for what comes, and times out with the latest events", async () => {
    await subscribed();
    const past = await server.hooks.waitForRequest((r) => r.disposition === "ack", { after: mark });
    expect(past.seq).toBeGreaterThan(mark);
    const later = server.hooks.mark();
    await expect(server.hooks.waitForRequest(undefined, { after: later, timeoutMs: 50 })).rejects.toThrow(
      /timed out after 50 ms waiting for a matching request event/,
    );
    await expect(server.hooks.waitForResponse(undefined, 30)).resolves.toBeDefined();
    const pending = server.hooks.waitForRequest((r) => r.typeUrl === EDS_TYPE_URL, { after: later });
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: EDS_TYPE_URL, resourceNames: ["x"] });
    expect((await pending).typeUrl).toBe(EDS_TYPE_URL);
  });
});

describe("holding and dropping", () => {
  test("a held response is built but written only on release; changes meanwhile coalesce into the next one", async () => {
    // Steps: hold CDS; two changes: the first builds a held response, the second waits behind it (one response per
    // type at a time); release writes the held one; the client's ACK brings the newest state, once.
    const { s } = await subscribed();
    server.hooks.hold({ typeUrl: CDS_TYPE_URL });
    server.setResource(buildCluster({ name: "c1", edsServiceName: "v2" }));
    const held = await server.hooks.waitForResponse((r) => r.delivery === "held", { after: mark });
    await s.none();
    server.setResource(buildCluster({ name: "c1", edsServiceName: "v3" }));
    await s.none();
    expect(server.hooks.responses().filter((r) => r.seq > held.seq)).toEqual([]);
    expect(newestStream(server).types[0]).toMatchObject({ waitingFor: "release", pending: true });
    server.hooks.release({ typeUrl: CDS_TYPE_URL });
    const first = await s.next();
    expect(first.nonce).toBe(held.nonce);
    await s.none();
    await s.ack(first, ["c1"]);
    const second = await s.next();
    expect(second.versionInfo).toBe(server.typeVersion(CDS_TYPE_URL));
    const sent = server.hooks.responses().filter((r) => r.seq > held.seq && r.delivery === "sent");
    expect(sent.map((r) => r.nonce)).toEqual([first.nonce, second.nonce]);
    await s.none();
  });

  test("a hold on one stream leaves the others alone", async () => {
    const a = await subscribed();
    const b = await subscribed();
    server.hooks.hold({ streamId: newestStream(server).id });
    server.setResource(buildCluster({ name: "c1", edsServiceName: "v2" }));
    expect(namesOf(await a.s.next())).toEqual(["c1"]);
    await b.s.none();
    server.hooks.release();
    expect(namesOf(await b.s.next())).toEqual(["c1"]);
  });

  test("dropped responses never arrive and are not resent", async () => {
    const { s } = await subscribed();
    server.hooks.drop({ typeUrl: CDS_TYPE_URL }, 1);
    server.setResource(buildCluster({ name: "c1", edsServiceName: "v2" }));
    const dropped = await server.hooks.waitForResponse((r) => r.delivery === "dropped", { after: mark });
    await s.none();
    // The client's next request carries the old nonce: stale, and nothing is resent.
    await s.send({ typeUrl: CDS_TYPE_URL, responseNonce: "1", resourceNames: ["c1", "c2"] });
    await s.none();
    // The drop rule is used up: the next change arrives.
    server.setResource(buildCluster({ name: "c1", edsServiceName: "v3" }));
    const next = await s.next();
    expect(Number(next.nonce)).toBeGreaterThan(Number(dropped.nonce));
  });
});

describe("breaking", () => {
  test("breakStreams ends streams with the given status", async () => {
    const a = await subscribed();
    const b = await subscribed();
    const target = newestStream(server).id;
    expect(server.hooks.breakStreams({ streamId: target, code: Code.ResourceExhausted, message: "go away" })).toBe(1);
    const error = await b.s.ended();
    expect(error).toBeInstanceOf(ConnectError);
    expect(error?.code).toBe(Code.ResourceExhausted);
    expect(error?.rawMessage).toBe("go away");
    const closed = await server.hooks.waitForStreamClose((e) => e.streamId === target);
    expect(closed).toMatchObject({ reason: "broken", code: Code.ResourceExhausted });
    // The other stream still works.
    server.setResource(buildCluster({ name: "c1", edsServiceName: "v2" }));
    expect(namesOf(await a.s.next())).toEqual(["c1"]);
  });

  test("breakStreams with code 0 ends streams cleanly", async () => {
    const { s } = await subscribed();
    server.hooks.breakStreams({ code: 0 });
    expect(await s.ended()).toBeUndefined();
  });

  test("abortConnections cuts the connection under every stream", async () => {
    const { s } = await subscribed();
    expect(server.hooks.abortConnections()).toBeGreaterThanOrEqual(1);
    const error = await s.ended();
    expect(error).toBeInstanceOf(ConnectError);
    const closed = await server.hooks.waitForStreamClose((e) => e.reason === "connection-aborted", { after: mark });
    expect(closed.code).toBeUndefined();
    // The server keeps serving new connections.
    const again = await subscribed();
    expect(namesOf(again.first)).toEqual(["c1"]);
  });
});

describe("injecting", () => {
  test("a response of the test's own reaches the client, and its ACK is taken", async () => {
    const { s } = await subscribed();
    const stream = newestStream(server);
    const duplicate = anyPack(ClusterSchema, create(ClusterSchema, { name: "c1" }));
    const nonce = server.hooks.injectResponse(stream.id, {
      typeUrl: CDS_TYPE_URL,
      versionInfo: "injected",
      resources: [duplicate, duplicate],
    });
    const response = await s.next();
    expect(response.nonce).toBe(nonce);
    expect(response.versionInfo).toBe("injected");
    expect(namesOf(response)).toEqual(["c1", "c1"]);
    const afterInject = server.hooks.mark();
    await s.ack(response, ["c1"]);
    const ack = await server.hooks.waitForRequest(undefined, { after: afterInject });
    expect(ack.disposition).toBe("ack");
    // What the server believes the client holds is unchanged: nothing is resent.
    await s.none();
    expect(() => server.hooks.injectResponse(9999, { typeUrl: CDS_TYPE_URL })).toThrow(/no open stream/);
  });
});

describe("stream info", () => {
  test("streams() shows each type's subscription, nonce, versions and what the client holds", async () => {
    const { first } = await subscribed(["c1", "c2"]);
    await server.hooks.waitForRequest((r) => r.disposition === "ack", { after: mark });
    const info = newestStream(server);
    expect(info.node?.id).toBe("hooks-node");
    expect(info.types).toHaveLength(1);
    const [cds] = info.types;
    expect(cds).toMatchObject({
      typeUrl: CDS_TYPE_URL,
      wildcard: false,
      resourceNames: ["c1", "c2"],
      lastNonce: first.nonce,
      lastVersion: first.versionInfo,
      ackedVersion: first.versionInfo,
      nack: undefined,
    });
    expect([...(cds?.sentVersions.keys() ?? [])]).toEqual(["c1", "c2"]);
  });
});
