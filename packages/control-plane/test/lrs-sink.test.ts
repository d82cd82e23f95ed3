// The LRS sink over real HTTP/2, driven by a raw LoadReportingService client (as Envoy or gRPC would talk to it).
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createWritableIterable } from "@connectrpc/connect/protocol";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { ClusterStatsSchema } from "@xdskit/protos/envoy/config/endpoint/v3/load_report_pb";
import {
  LoadReportingService,
  type LoadStatsRequest,
  LoadStatsRequestSchema,
  type LoadStatsResponse,
} from "@xdskit/protos/envoy/service/load_stats/v3/lrs_pb";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { buildCluster, createManagementServer, formatClusterLoads, type ManagementServer } from "../src/index.js";
import { grpcFrame, LRS_PATH, rawSession, rawStream } from "./raw-grpc.js";

const FEATURE = "envoy.lrs.supports_send_all_clusters";

interface RawLrsStream {
  send(init: MessageInitShape<typeof LoadStatsRequestSchema>): Promise<void>;
  next(timeoutMs?: number): Promise<LoadStatsResponse>;
  /** The status the stream ended with (undefined: OK). */
  ended(): Promise<ConnectError | undefined>;
  close(): void;
}

function openLrs(url: string, signals: AbortController[]): RawLrsStream {
  const client = createClient(LoadReportingService, createGrpcTransport({ baseUrl: url }));
  const requests = createWritableIterable<LoadStatsRequest>();
  const abort = new AbortController();
  signals.push(abort);
  const responses: LoadStatsResponse[] = [];
  let wake: (() => void) | undefined;
  let end: ConnectError | undefined;
  let done = false;
  const finished = (async () => {
    try {
      for await (const response of client.streamLoadStats(requests, { signal: abort.signal })) {
        responses.push(response);
        wake?.();
      }
    } catch (error) {
      end = ConnectError.from(error);
    }
    done = true;
    wake?.();
  })();
  return {
    send: (init) => requests.write(create(LoadStatsRequestSchema, init)),
    async next(timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (responses.length === 0) {
        if (done) throw new Error(`stream ended: ${end?.message ?? "OK"}`);
        if (Date.now() > deadline) throw new Error("timed out waiting for an LRS response");
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 50);
        });
      }
      return responses.shift() as LoadStatsResponse;
    },
    ended: () => finished.then(() => end),
    close: () => requests.close(),
  };
}

function localityStats(zone: string, issued: number, extra: object = {}) {
  return {
    locality: { region: "r", zone },
    totalIssuedRequests: BigInt(issued),
    totalSuccessfulRequests: BigInt(issued - 1),
    totalErrorRequests: 1n,
    totalRequestsInProgress: 0n,
    ...extra,
  };
}

function clusterStats(
  clusterName: string,
  localities: ReturnType<typeof localityStats>[],
  drops: Pick<MessageInitShape<typeof ClusterStatsSchema>, "totalDroppedRequests" | "droppedRequests"> = {},
): MessageInitShape<typeof ClusterStatsSchema> {
  return { clusterName, upstreamLocalityStats: localities, loadReportInterval: { seconds: 2n }, ...drops };
}

describe("the control plane's LRS sink", () => {
  let server: ManagementServer;
  const signals: AbortController[] = [];

  beforeAll(async () => {
    server = await createManagementServer({ lrsPolicy: { intervalMs: 1500 } });
  });
  afterEach(() => {
    for (const signal of signals.splice(0)) signal.abort();
  });
  afterAll(() => server.close());

  test("tells a node to send every cluster at the default interval, and keeps its reports by node and cluster", async () => {
    // 1. A node with the send_all_clusters feature opens a stream: the answer is send_all_clusters, 1.5 s.
    // 2. It reports two clusters: the report is kept with the node, waitForReport sees it, latestLoads reads it.
    // 3. An empty report is kept as a report but leaves the latest loads as they were.
    const lrs = openLrs(server.url, signals);
    await lrs.send({ node: { id: "node-a", clientFeatures: [FEATURE] } });
    const response = await lrs.next();
    expect(response.sendAllClusters).toBe(true);
    expect(response.clusters).toEqual([]);
    expect(response.loadReportingInterval).toMatchObject({ seconds: 1n, nanos: 500_000_000 });

    const mark = server.lrs.mark();
    await lrs.send({
      clusterStats: [
        clusterStats("alpha", [
          localityStats("a", 10, {
            cpuUtilization: { numRequestsFinishedWithMetric: 4n, totalMetricValue: 2 },
            loadMetricStats: [
              { metricName: "named_metrics.foo", numRequestsFinishedWithMetric: 2n, totalMetricValue: 3 },
            ],
          }),
        ]),
        clusterStats("beta", [localityStats("b", 3)], {
          totalDroppedRequests: 2n,
          droppedRequests: [{ category: "lb", droppedCount: 2n }],
        }),
      ],
    });
    const report = await server.lrs.waitForReport((r) => r.nodeId === "node-a", { after: mark });
    expect(report.clusterStats.map((c) => c.clusterName)).toEqual(["alpha", "beta"]);
    expect(report.node?.id).toBe("node-a");

    const [alpha] = server.lrs.latestLoads({ nodeId: "node-a", clusterName: "alpha" });
    expect(alpha).toEqual({
      nodeId: "node-a",
      clusterName: "alpha",
      clusterServiceName: "",
      intervalMs: 2000,
      receivedAt: report.receivedAt,
      localities: [
        {
          region: "r",
          zone: "a",
          subZone: "",
          issued: 10,
          succeeded: 9,
          errors: 1,
          inProgress: 0,
          cpuUtilization: { total: 2, count: 4, mean: 0.5 },
          metrics: { "named_metrics.foo": { total: 3, count: 2, mean: 1.5 } },
        },
      ],
      totalDropped: 0,
      droppedByCategory: {},
    });
    expect(report.loads[0]).toEqual(alpha);
    expect(server.lrs.latestLoads({ clusterName: "beta" })[0]).toMatchObject({
      totalDropped: 2,
      droppedByCategory: { lb: 2 },
    });

    const table = formatClusterLoads(server.lrs.latestLoads({ nodeId: "node-a" }));
    expect(table).toMatch(/node-a +alpha +r\/a +10 +9 +1 +0 +cpu_utilization +0\.500 +4/);
    expect(table).toMatch(/named_metrics\.foo +1\.500 +2/);
    expect(table).toMatch(/beta +dropped 2 +lb=2/);

    const before = server.lrs.mark();
    await lrs.send({ clusterStats: [] });
    const empty = await server.lrs.waitForReport(undefined, { after: before });
    expect(empty.clusterStats).toEqual([]);
    expect(server.lrs.latestLoads({ nodeId: "node-a" })).toHaveLength(2);
  });

  test("a policy per node: clusters and interval, pushed again to an open stream when it changes", async () => {
    // 1. node-b has its own policy: clusters [alpha], 500 ms. 2. It changes: the open stream gets the new one.
    // 3. It is removed: the stream falls back to the default. 4. Other nodes keep the default throughout.
    const removeFirst = server.lrs.setPolicy({ clusters: ["alpha"], intervalMs: 500 }, "node-b");
    const b = openLrs(server.url, signals);
    const other = openLrs(server.url, signals);
    await b.send({ node: { id: "node-b", clientFeatures: [FEATURE] } });
    await other.send({ node: { id: "node-c", clientFeatures: [FEATURE] } });
    expect(await b.next()).toMatchObject({
      sendAllClusters: false,
      clusters: ["alpha"],
      loadReportingInterval: { nanos: 500_000_000 },
    });
    expect(await other.next()).toMatchObject({ sendAllClusters: true, loadReportingInterval: { seconds: 1n } });

    const removeSecond = server.lrs.setPolicy({ clusters: ["alpha", "gamma"], intervalMs: 2000 }, { nodeId: "node-b" });
    expect(await b.next()).toMatchObject({ clusters: ["alpha", "gamma"], loadReportingInterval: { seconds: 2n } });
    expect(server.lrs.streams().find((s) => s.nodeId === "node-b")?.policy).toEqual({
      clusters: ["alpha", "gamma"],
      intervalMs: 2000,
    });
    removeFirst(); // replaced already: nothing changes
    removeSecond();
    expect(await b.next()).toMatchObject({
      sendAllClusters: true,
      clusters: [],
      loadReportingInterval: { nanos: 500_000_000 },
    });
    await expect(other.next(300)).rejects.toThrow("timed out");
  });

  test("a client without send_all_clusters support gets the names of the clusters it is served", async () => {
    server.setResources([buildCluster({ name: "c2" }), buildCluster({ name: "c1" })]);
    const lrs = openLrs(server.url, signals);
    await lrs.send({ node: { id: "old-client" } });
    expect(await lrs.next()).toMatchObject({ sendAllClusters: false, clusters: ["c1", "c2"] });
    server.clear();
  });

  test("stopping the server ends LRS streams with UNAVAILABLE; after a start a new stream reports again", async () => {
    const lrs = openLrs(server.url, signals);
    await lrs.send({ node: { id: "node-d", clientFeatures: [FEATURE] } });
    await lrs.next();
    expect(server.lrs.streams().some((s) => s.nodeId === "node-d")).toBe(true);
    await server.restart();
    expect((await lrs.ended())?.code).toBe(Code.Unavailable);
    expect(server.lrs.streams().some((s) => s.nodeId === "node-d")).toBe(false);

    const again = openLrs(server.url, signals);
    await again.send({ node: { id: "node-d", clientFeatures: [FEATURE] } });
    await again.next();
    const mark = server.lrs.mark();
    await again.send({ clusterStats: [clusterStats("alpha", [localityStats("z", 5)])] });
    const report = await server.lrs.waitForReport((r) => r.nodeId === "node-d", { after: mark });
    expect(report.clusterStats[0]?.upstreamLocalityStats[0]?.totalIssuedRequests).toBe(5n);
  });

  test("a client that half-closes gets OK", async () => {
    const lrs = openLrs(server.url, signals);
    await lrs.send({ node: { id: "node-e", clientFeatures: [FEATURE] } });
    await lrs.next();
    lrs.close();
    expect(await lrs.ended()).toBeUndefined();
  });

  test("a stream's node is fixed by its first request: a report naming another node ends it with INVALID_ARGUMENT", async () => {
    // 1. node-f opens a stream and reports; a later request repeating its node is a report like any other.
    // 2. A request naming node-g ends the stream with INVALID_ARGUMENT; it is not counted for either node.
    const lrs = openLrs(server.url, signals);
    await lrs.send({ node: { id: "node-f", clientFeatures: [FEATURE] } });
    await lrs.next();
    const mark = server.lrs.mark();
    await lrs.send({ node: { id: "node-f", clientFeatures: [FEATURE] }, clusterStats: [clusterStats("f", [])] });
    expect((await server.lrs.waitForReport((r) => r.nodeId === "node-f", { after: mark })).streamId).toBeGreaterThan(0);
    const before = server.lrs.mark();
    await lrs.send({ node: { id: "node-g" }, clusterStats: [clusterStats("g", [localityStats("z", 3)])] });
    const ended = await lrs.ended();
    expect([ended?.code, ended?.rawMessage]).toEqual([
      Code.InvalidArgument,
      'a stream cannot change its node (from "node-f" to "node-g")',
    ]);
    expect(server.lrs.reports().filter((r) => r.seq > before)).toEqual([]);
    expect(server.lrs.streams().some((s) => s.nodeId === "node-f")).toBe(false);
  });

  test("a request that does not decode ends the stream with INVALID_ARGUMENT and a readable message", async () => {
    // A LoadStatsRequest whose node field (1, length-delimited) claims 5 bytes and carries 1.
    const session = rawSession(server.url);
    try {
      const raw = rawStream(session, LRS_PATH);
      raw.stream.end(grpcFrame(Uint8Array.of(0x0a, 0x05, 0x0a)));
      const outcome = await raw.closed;
      expect(outcome.status).toBe(Code.InvalidArgument);
      expect(outcome.message).toBe("unreadable request: premature EOF");
      expect(server.lrs.streams()).toEqual([]);
    } finally {
      session.destroy();
    }
  });
});
