// The LRS client against @xdskit/control-plane's LRS sink over real HTTP/2 on 127.0.0.1. Time for report intervals
// and retries is a virtual clock the tests move; everything else is real.
import { createManagementServer, type LoadReportEvent, type ManagementServer } from "@xdskit/control-plane";
import type { ClusterStats } from "@xdskit/protos/envoy/config/endpoint/v3/load_report_pb";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { type Clock, createLrsClient, type LrsClient, systemClock } from "../src/index.js";
import { createVirtualClock, type VirtualClock } from "./support/virtual-clock.js";
import { waitUntil } from "./support/wait.js";

const FEATURE = "envoy.lrs.supports_send_all_clusters";

describe("the LRS client against the control plane's sink", () => {
  let server: ManagementServer;
  let nodeSeq = 0;
  const clients: LrsClient[] = [];

  beforeAll(async () => {
    server = await createManagementServer({ lrsPolicy: { intervalMs: 2000 } });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(() => server.close());

  function newClient(clock: VirtualClock, extra: { minReportIntervalMs?: number } = {}) {
    const nodeId = `lrs-node-${++nodeSeq}`;
    const client = createLrsClient({
      node: { id: nodeId, cluster: "test", locality: { region: "r1", zone: "z1" }, clientFeatures: ["x.feature"] },
      clock,
      env: {},
      backoff: { initialMs: 100, jitter: 0 },
      closeGraceMs: 2000,
      ...extra,
    });
    clients.push(client);
    return { client, nodeId, lrsServer: { serverUri: server.address } };
  }

  /** Waits until the client has the server's answer: its report timer is pending. */
  async function answered(clock: VirtualClock, intervalMs: number): Promise<void> {
    await waitUntil(() => clock.pending().includes(intervalMs), `a report timer of ${intervalMs} ms is pending`);
  }

  async function nextReport(nodeId: string, after: number): Promise<LoadReportEvent> {
    return server.lrs.waitForReport((r) => r.nodeId === nodeId, { after });
  }

  const issued = (stats: ClusterStats | undefined) =>
    (stats?.upstreamLocalityStats ?? []).reduce((n, l) => n + Number(l.totalIssuedRequests), 0);

  test("scenario 58: node and send_all_clusters feature first; the server's interval honoured; intervals measured", async () => {
    // 1. A handle starts the call: the stream's node is ours, with our feature and envoy.lrs.supports_send_all_clusters.
    // 2. The sink answers "every 2 s": the client's report timer is 2000 ms; advancing 2 s sends a report whose
    //    load_report_interval is 2 s (the time since the handle was created), with our calls.
    // 3. The policy changes to 5 s: the next report comes 5 s later and says 5 s.
    // 4. A policy asking for 200 ms gets gRPC's floor of 1 s.
    const clock = createVirtualClock();
    const { client, nodeId, lrsServer } = newClient(clock);
    const stats = client.localityStats({ server: lrsServer, clusterName: "alpha", locality: { zone: "a" } });
    await answered(clock, 2000);
    const stream = server.lrs.streams().find((s) => s.nodeId === nodeId);
    expect(stream?.policy).toEqual({ clusters: "all", intervalMs: 2000 });

    stats.callStarted();
    stats.callFinished("ok");
    let mark = server.lrs.mark();
    clock.advance(2000);
    const first = await nextReport(nodeId, mark);
    expect(first.node?.id).toBe(nodeId);
    expect(first.node?.clientFeatures).toEqual(["x.feature", FEATURE]);
    expect(first.node?.locality).toMatchObject({ region: "r1", zone: "z1" });
    expect(first.clusterStats.map((c) => c.clusterName)).toEqual(["alpha"]);
    expect(first.clusterStats[0]?.loadReportInterval).toMatchObject({ seconds: 2n, nanos: 0 });
    expect(issued(first.clusterStats[0])).toBe(1);

    server.lrs.setPolicy({ intervalMs: 5000 }, nodeId);
    await answered(clock, 5000);
    stats.callStarted();
    mark = server.lrs.mark();
    clock.advance(5000);
    const second = await nextReport(nodeId, mark);
    expect(second.clusterStats[0]?.loadReportInterval).toMatchObject({ seconds: 5n, nanos: 0 });
    expect(second.clusterStats[0]?.upstreamLocalityStats[0]).toMatchObject({
      totalIssuedRequests: 1n,
      totalRequestsInProgress: 1n,
    });

    server.lrs.setPolicy({ intervalMs: 200 }, nodeId);
    await answered(clock, 1000);
    mark = server.lrs.mark();
    clock.advance(1000);
    expect((await nextReport(nodeId, mark)).clusterStats[0]?.loadReportInterval).toMatchObject({ seconds: 1n });
  });

  test("scenario 59: an explicit cluster list is honoured; clusters not in it are not reported; then all clusters", async () => {
    const clock = createVirtualClock();
    const { client, nodeId, lrsServer } = newClient(clock);
    server.lrs.setPolicy({ clusters: ["wanted"], intervalMs: 3000 }, nodeId);
    const wanted = client.localityStats({ server: lrsServer, clusterName: "wanted", locality: { zone: "a" } });
    const other = client.localityStats({ server: lrsServer, clusterName: "other", locality: { zone: "a" } });
    await answered(clock, 3000);
    wanted.callStarted();
    other.callStarted();
    other.callStarted();
    let mark = server.lrs.mark();
    clock.advance(3000);
    const report = await nextReport(nodeId, mark);
    expect(report.clusterStats.map((c) => c.clusterName)).toEqual(["wanted"]);

    server.lrs.setPolicy({ clusters: "all", intervalMs: 3000 }, nodeId);
    await waitUntil(
      () => server.lrs.streams().find((s) => s.nodeId === nodeId)?.policy.clusters === "all",
      "policy pushed",
    );
    // The same interval keeps the timer running; give the client a moment to take the new cluster list.
    await new Promise((resolve) => setTimeout(resolve, 50));
    other.callStarted();
    mark = server.lrs.mark();
    clock.advance(3000);
    const all = await nextReport(nodeId, mark);
    expect(all.clusterStats.map((c) => [c.clusterName, issued(c)])).toEqual([
      ["wanted", 0],
      ["other", 1],
    ]);
  });

  test("scenario 60: counts per locality and drops per category arrive as deltas; two all-zero reports are one", async () => {
    // 1. Calls in two localities and drops; a report carries them.
    // 2. Nothing happens: one all-zero report is sent, the next one is skipped.
    // 3. A call: the next report carries just it (so nothing was sent in between).
    const clock = createVirtualClock();
    const { client, nodeId, lrsServer } = newClient(clock);
    const key = { server: lrsServer, clusterName: "c60", edsServiceName: "c60-eds" };
    const a = client.localityStats({ ...key, locality: { region: "r", zone: "a" } });
    const b = client.localityStats({ ...key, locality: { region: "r", zone: "b" } });
    const drops = client.dropStats(key);
    await answered(clock, 2000);
    for (let i = 0; i < 3; i++) a.callStarted();
    a.callFinished("ok");
    a.callFinished("error");
    b.callStarted();
    b.callFinished("ok");
    drops.callDropped("lb");
    drops.callDropped();
    let mark = server.lrs.mark();
    clock.advance(2000);
    const report = await nextReport(nodeId, mark);
    const [load] = server.lrs.latestLoads({ nodeId, clusterName: "c60" });
    expect(load).toMatchObject({
      clusterServiceName: "c60-eds",
      intervalMs: 2000,
      totalDropped: 2,
      droppedByCategory: { lb: 1 },
      localities: [
        { zone: "a", issued: 3, succeeded: 1, errors: 1, inProgress: 1 },
        { zone: "b", issued: 1, succeeded: 1, errors: 0, inProgress: 0 },
      ],
    });
    expect(report.clusterStats).toHaveLength(1);

    a.callFinished("ok");
    mark = server.lrs.mark();
    clock.advance(2000);
    const afterFinish = await nextReport(nodeId, mark);
    expect(
      afterFinish.clusterStats[0]?.upstreamLocalityStats.map((l) => [
        l.totalSuccessfulRequests,
        l.totalRequestsInProgress,
      ]),
    ).toEqual([
      [1n, 0n],
      [0n, 0n],
    ]);
    mark = server.lrs.mark();
    clock.advance(2000); // all zero: sent (the previous report was not)
    const zero = await nextReport(nodeId, mark);
    expect(issued(zero.clusterStats[0])).toBe(0);
    mark = server.lrs.mark();
    clock.advance(2000); // all zero again: skipped
    await waitUntil(() => clock.pending().includes(2000), "the next report is scheduled");
    b.callStarted();
    clock.advance(2000);
    const next = await nextReport(nodeId, mark);
    expect(issued(next.clusterStats[0])).toBe(1);
  });

  test("scenario 63: the LRS server restarts; a new call; counting goes on with nothing counted twice", async () => {
    // 1. 3 calls, reported. 2. The server restarts: the call fails; the client retries after its backoff (100 ms).
    // 3. 2 calls during the outage. 4. The first report on the new call carries exactly those 2: the sum of all
    //    reports is the 5 calls made.
    const clock = createVirtualClock();
    const { client, nodeId, lrsServer } = newClient(clock);
    const stats = client.localityStats({ server: lrsServer, clusterName: "c63", locality: { zone: "a" } });
    await answered(clock, 2000);
    for (let i = 0; i < 3; i++) {
      stats.callStarted();
      stats.callFinished("ok");
    }
    const start = server.lrs.mark();
    clock.advance(2000);
    await nextReport(nodeId, start);

    await server.restart();
    await waitUntil(() => clock.pending().includes(100), "the retry is scheduled after the backoff");
    for (let i = 0; i < 2; i++) {
      stats.callStarted();
      stats.callFinished("ok");
    }
    clock.advance(100);
    await answered(clock, 2000);
    const mark = server.lrs.mark();
    clock.advance(2000);
    const after = await nextReport(nodeId, mark);
    expect(issued(after.clusterStats[0])).toBe(2);
    const total = server.lrs
      .reports()
      .filter((r) => r.nodeId === nodeId && r.seq > 0)
      .reduce((n, r) => n + issued(r.clusterStats[0]), 0);
    expect(total).toBe(5);
  });

  test("close() sends what was not reported once, ends the call and leaves no timer; the client refuses new handles", async () => {
    const clock = createVirtualClock();
    const { client, nodeId, lrsServer } = newClient(clock);
    const stats = client.localityStats({ server: lrsServer, clusterName: "cclose", locality: { zone: "a" } });
    await answered(clock, 2000);
    stats.callStarted();
    stats.callFinished("ok");
    let mark = server.lrs.mark();
    clock.advance(2000);
    await nextReport(nodeId, mark);
    stats.callStarted();
    stats.callFinished("error");
    mark = server.lrs.mark();
    await client.close();
    const final = await nextReport(nodeId, mark);
    expect(final.clusterStats[0]?.upstreamLocalityStats[0]).toMatchObject({
      totalIssuedRequests: 1n,
      totalErrorRequests: 1n,
    });
    expect(clock.pending()).toEqual([]);
    await waitUntil(() => !server.lrs.streams().some((s) => s.nodeId === nodeId), "the sink sees the stream end");
    await client.close();
    expect(server.lrs.reports().filter((r) => r.nodeId === nodeId)).toHaveLength(2);
    expect(() => client.localityStats({ server: lrsServer, clusterName: "x", locality: {} })).toThrow("closed");
  });

  test("the call ends once every handle is released and its last figures are reported", async () => {
    const clock = createVirtualClock();
    const { client, nodeId, lrsServer } = newClient(clock);
    const stats = client.localityStats({ server: lrsServer, clusterName: "cidle", locality: { zone: "a" } });
    await answered(clock, 2000);
    stats.callStarted();
    stats.callFinished("ok");
    stats.release();
    const mark = server.lrs.mark();
    clock.advance(2000);
    expect(issued((await nextReport(nodeId, mark)).clusterStats[0])).toBe(1);
    await waitUntil(() => !server.lrs.streams().some((s) => s.nodeId === nodeId), "the call ends");
    expect(clock.pending()).toEqual([]);
    // A new handle starts a new call.
    client.localityStats({ server: lrsServer, clusterName: "cidle", locality: { zone: "b" } });
    await waitUntil(() => server.lrs.streams().some((s) => s.nodeId === nodeId), "a new call");
  });

  test("a handle released with calls in flight reports their completions, then the call ends (issue 25.10)", async () => {
    // 1. Two calls start; the handle is released (the locality left the EDS update) while both run.
    // 2. The next report: 2 issued, 2 in progress; the LRS call stays up, the handle still counts.
    // 3. Both finish (one ok with an ORCA report, one error); the next report carries them, with the utilization.
    // 4. Nothing is left: the call ends.
    const clock = createVirtualClock();
    const { client, nodeId, lrsServer } = newClient(clock);
    const propagation = { cpuUtilization: true } as const;
    const stats = client.localityStats({
      server: lrsServer,
      clusterName: "cfly",
      locality: { zone: "a" },
      propagation,
    });
    await answered(clock, 2000);
    stats.callStarted();
    stats.callStarted();
    stats.release();
    let mark = server.lrs.mark();
    clock.advance(2000);
    const during = (await nextReport(nodeId, mark)).clusterStats[0]?.upstreamLocalityStats[0];
    expect([during?.totalIssuedRequests, during?.totalRequestsInProgress]).toEqual([2n, 2n]);
    await answered(clock, 2000);

    stats.callFinished("ok", { cpuUtilization: 0.5, memUtilization: 0, applicationUtilization: 0, namedMetrics: {} });
    stats.callFinished("error");
    mark = server.lrs.mark();
    clock.advance(2000);
    const after = (await nextReport(nodeId, mark)).clusterStats[0]?.upstreamLocalityStats[0];
    expect(after).toMatchObject({
      totalIssuedRequests: 0n,
      totalSuccessfulRequests: 1n,
      totalErrorRequests: 1n,
      totalRequestsInProgress: 0n,
      cpuUtilization: { numRequestsFinishedWithMetric: 1n, totalMetricValue: 0.5 },
    });
    await waitUntil(() => !server.lrs.streams().some((s) => s.nodeId === nodeId), "the call ends");
    // Released and idle, the handle counts nothing more.
    stats.callStarted();
    expect(clock.pending()).toEqual([]);
  });

  test("a load-reporting interval of 30 days waits: no report, no timer firing, no TimeoutOverflowWarning", async () => {
    // The real clock, observed: every timer the client sets goes through Node's timers, and each firing is counted.
    // Node alone would fire a 30-day timer after 1 ms, again and again, sending a report each time.
    const DAYS_30_MS = 30 * 24 * 60 * 60 * 1000;
    const delays: number[] = [];
    let fired = 0;
    const observed: Clock = {
      now: () => systemClock.now(),
      setTimeout: (callback, ms) => {
        delays.push(ms);
        return systemClock.setTimeout(() => {
          fired++;
          callback();
        }, ms);
      },
      clearTimeout: (handle) => systemClock.clearTimeout(handle),
    };
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const { client, nodeId, lrsServer } = newClient(observed as VirtualClock);
      server.lrs.setPolicy({ intervalMs: DAYS_30_MS }, nodeId);
      const stats = client.localityStats({ server: lrsServer, clusterName: "monthly", locality: { zone: "a" } });
      stats.callStarted();
      await waitUntil(() => delays.includes(DAYS_30_MS), "the client set its report timer for 30 days");
      const mark = server.lrs.mark();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(fired).toBe(0);
      expect(server.lrs.reports().filter((r) => r.seq > mark && r.nodeId === nodeId)).toEqual([]);
      expect(warnings.filter((w) => w.name === "TimeoutOverflowWarning")).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
