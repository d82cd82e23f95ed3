// A client that does not read or does not ACK cannot make the server queue: one response per type is in flight at a
// time, changes meanwhile coalesce into the newest state, and a stream whose queue would pass its byte budget ends.

import * as http2 from "node:http2";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { xdsRegistry } from "@xdskit/protos";
import type { Cluster } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import {
  DiscoveryRequestSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { afterEach, describe, expect, test } from "vitest";
import {
  buildCluster,
  buildListener,
  CDS_TYPE_URL,
  createManagementServer,
  LDS_TYPE_URL,
  type Logger,
  type ManagementServer,
} from "../src/index.js";
import { createHarness } from "./ads-client.js";
import { grpcFrame, rawSession, rawStream, waitForMessages } from "./raw-grpc.js";
import { subscribe } from "./util.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function started(options: Parameters<typeof createManagementServer>[0] = {}) {
  const warnings: string[] = [];
  const logger: Logger = {
    error: (m) => warnings.push(m),
    warn: (m) => warnings.push(m),
    info: () => {},
    debug: () => {},
  };
  const server = await createManagementServer({ logger, ...options });
  const h = createHarness(server.url);
  cleanups.push(
    () => server.close(),
    () => h.cleanup(),
  );
  return { server, h, warnings };
}

/** Enough clusters that a full CDS response (about 100 KB) does not fit in one HTTP/2 flow-control window. */
function manyClusters(server: ManagementServer, edsServiceName = "v0"): void {
  server.setSnapshot(
    Array.from({ length: 2000 }, (_, i) =>
      buildCluster({ name: `cluster-${String(i).padStart(4, "0")}`, edsServiceName }),
    ),
  );
}

function clusterNamed(response: DiscoveryResponse, name: string): Cluster | undefined {
  for (const any of response.resources) {
    const cluster = anyUnpack(any, xdsRegistry) as Cluster | undefined;
    if (cluster?.name === name) return cluster;
  }
  return undefined;
}

/** Ten changes to one cluster, each in its own turn of the event loop (so none coalesces by timing alone). */
async function tenChanges(server: ManagementServer, name: string): Promise<void> {
  for (let i = 1; i <= 10; i++) {
    server.setResource(buildCluster({ name, edsServiceName: `v${i}` }));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function responsesOf(server: ManagementServer, streamId: number) {
  return server.hooks.responses().filter((r) => r.streamId === streamId);
}

describe("a client that reads but does not ACK", () => {
  test("gets one response per type; the newest state follows its ACK, once", async () => {
    // Steps: subscribe to CDS and take the first response without ACKing it; ten changes: nothing is sent, the
    // stream shows the type waiting for its ACK with a change pending; the ACK brings one response with the tenth
    // change; nothing follows.
    const { server, h } = await started();
    server.setResources([buildCluster({ name: "c1", edsServiceName: "v0" }), buildCluster({ name: "c2" })]);
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: ["c1", "c2"] });
    const first = await s.next();
    await tenChanges(server, "c1");
    await s.none();
    const [stream] = server.streams();
    expect(stream?.types[0]).toMatchObject({ waitingFor: "ack", pending: true, lastNonce: first.nonce });
    expect(responsesOf(server, stream?.id ?? 0)).toHaveLength(1);

    await s.ack(first, ["c1", "c2"]);
    const newest = await s.next();
    expect(newest.versionInfo).toBe(server.typeVersion(CDS_TYPE_URL));
    expect(clusterNamed(newest, "c1")?.edsClusterConfig?.serviceName).toBe("v10");
    await s.ack(newest, ["c1", "c2"]);
    await s.none();
    expect(responsesOf(server, stream?.id ?? 0)).toHaveLength(2);
    expect(server.streams()[0]?.types[0]).toMatchObject({ waitingFor: undefined, pending: false });
  });

  test("other types are not held up by one type waiting for its ACK", async () => {
    const { server, h } = await started();
    server.setResources([buildCluster({ name: "c1" }), buildListener({ name: "l1", routeConfigName: "r1" })]);
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: ["c1"] });
    await s.next();
    await s.send({ typeUrl: LDS_TYPE_URL, resourceNames: ["l1"] });
    expect((await s.next()).typeUrl).toBe(LDS_TYPE_URL);
  });
});

describe("a client that does not read", () => {
  test("holds one unwritten response per type; changes coalesce until it reads, then the newest follows", async () => {
    // Steps: a raw client subscribes to 2,000 clusters and does not read: the response waits for the connection.
    // Ten changes build nothing. The client reads and ACKs the first response: exactly one more arrives, with the
    // tenth change, and the server's queue is empty.
    const { server } = await started();
    manyClusters(server);
    const session = rawSession(server.url);
    cleanups.push(() => session.destroy());
    const raw = rawStream(session, undefined, { read: false });
    raw.stream.write(
      grpcFrame(
        toBinary(DiscoveryRequestSchema, create(DiscoveryRequestSchema, { node: { id: "n" }, typeUrl: CDS_TYPE_URL })),
      ),
    );
    await server.hooks.waitForResponse();
    const [stuck] = server.streams();
    expect(stuck?.queuedBytes).toBeGreaterThan(0);
    expect(stuck?.types[0]?.waitingFor).toBe("write");
    await tenChanges(server, "cluster-0000");
    expect(server.streams()[0]?.types[0]).toMatchObject({ waitingFor: "write", pending: true });
    expect(responsesOf(server, stuck?.id ?? 0)).toHaveLength(1);

    raw.read();
    const [firstBytes] = await waitForMessages(raw, 1);
    const first = fromBinary(DiscoveryResponseSchema, firstBytes as Buffer);
    expect(clusterNamed(first, "cluster-0000")?.edsClusterConfig?.serviceName).toBe("v0");
    raw.stream.write(
      grpcFrame(
        toBinary(
          DiscoveryRequestSchema,
          create(DiscoveryRequestSchema, {
            typeUrl: CDS_TYPE_URL,
            versionInfo: first.versionInfo,
            responseNonce: first.nonce,
          }),
        ),
      ),
    );
    const [, newestBytes] = await waitForMessages(raw, 2);
    const newest = fromBinary(DiscoveryResponseSchema, newestBytes as Buffer);
    expect(newest.versionInfo).toBe(server.typeVersion(CDS_TYPE_URL));
    expect(clusterNamed(newest, "cluster-0000")?.edsClusterConfig?.serviceName).toBe("v10");
    expect(newest.resources).toHaveLength(2000);
    expect(responsesOf(server, stuck?.id ?? 0)).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(raw.messages).toHaveLength(2);
    expect(server.streams()[0]?.queuedBytes).toBe(0);
  }, 60_000); // 10 s at load average 45

  test("past maxQueuedBytesPerStream the stream ends with RESOURCE_EXHAUSTED, logged once; others carry on", async () => {
    // Steps: a 64 KiB budget; a raw client that does not read subscribes to CDS (about 100 KB, stuck behind flow
    // control), then to LDS: that second response would pass the budget, so the stream ends with RESOURCE_EXHAUSTED
    // (an HTTP/2 reset with ENHANCE_YOUR_CALM, which gRPC clients read as RESOURCE_EXHAUSTED) and one warning.
    // A reading client is served all the while.
    const { server, h, warnings } = await started({ maxQueuedBytesPerStream: 64 * 1024 });
    manyClusters(server);
    server.setResources(
      Array.from({ length: 2000 }, (_, i) => buildListener({ name: `listener-${i}`, routeConfigName: `route-${i}` })),
    );
    const session = rawSession(server.url);
    cleanups.push(() => session.destroy());
    const raw = rawStream(session, undefined, { read: false });
    const request = (typeUrl: string, node?: { id: string }) =>
      grpcFrame(
        toBinary(DiscoveryRequestSchema, create(DiscoveryRequestSchema, { ...(node ? { node } : {}), typeUrl })),
      );
    raw.stream.write(request(CDS_TYPE_URL, { id: "stuck" }));
    await server.hooks.waitForResponse((r) => r.typeUrl === CDS_TYPE_URL);
    const id = server.streams()[0]?.id;
    raw.stream.write(request(LDS_TYPE_URL));
    const closed = await server.hooks.waitForStreamClose((e) => e.streamId === id);
    expect(closed).toMatchObject({ reason: "queue-full", code: Code.ResourceExhausted });
    expect(closed.message).toMatch(/exceed maxQueuedBytesPerStream \(65536 bytes\)/);
    raw.read();
    const outcome = await raw.closed;
    expect(outcome.rstCode).toBe(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
    expect(warnings).toEqual([closed.message].map((m) => `[control-plane] [ads #${id}] ${m}`));

    const good = await subscribe(server, h, CDS_TYPE_URL, ["cluster-0001"]);
    expect(good.first.resources).toHaveLength(1);
  });

  test("writes waiting on one connection do not cost it its other streams", async () => {
    // Steps: on one connection, 150 streams subscribe to about 100 KB each and do not read (some 15 MB wait, more
    // than node:http2's default session memory of 10 MB); a new stream on the same connection is still served.
    const { server } = await started();
    manyClusters(server);
    const session = rawSession(server.url);
    cleanups.push(() => session.destroy());
    const request = (node: string) =>
      grpcFrame(
        toBinary(DiscoveryRequestSchema, create(DiscoveryRequestSchema, { node: { id: node }, typeUrl: CDS_TYPE_URL })),
      );
    for (let i = 0; i < 150; i++) rawStream(session, undefined, { read: false }).stream.write(request(`stuck-${i}`));
    while (server.streams().length < 150) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(server.streams().reduce((sum, s) => sum + s.queuedBytes, 0)).toBeGreaterThan(10 * 1024 * 1024);
    const reader = rawStream(session);
    reader.stream.write(request("reader"));
    const [bytes] = await waitForMessages(reader, 1);
    expect(fromBinary(DiscoveryResponseSchema, bytes as Buffer).resources).toHaveLength(2000);
    expect(server.streams()).toHaveLength(151);
  }, 60_000); // 151 streams and 15 MB on one connection: 7 s in npm test with the machine busy
});
