// How calls and their ORCA reports add up into a locality's LRS figures: A64's example, A85's filter table, zero
// utilizations, the A85 switch, drops, and deltas between reports.
import { create } from "@bufbuild/protobuf";
import type { UpstreamLocalityStats } from "@xdskit/protos/envoy/config/endpoint/v3/load_report_pb";
import { OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import { describe, expect, test } from "vitest";
import {
  createLoadStore,
  type LoadStore,
  type OrcaPropagationConfig,
  parseLrsReportEndpointMetrics,
  resolveOrcaLrsPropagation,
} from "../src/index.js";
import { createVirtualClock } from "./support/virtual-clock.js";

const SERVER = { serverUri: "lrs.example:443" };
const ALL = { sendAllClusters: true, clusters: new Set<string>() };
const orca = (init: Parameters<typeof create<typeof OrcaLoadReportSchema>>[1]) => create(OrcaLoadReportSchema, init);

/** Runs one call per report through a fresh handle and returns the locality's stats from the next report. */
function aggregate(
  reports: (ReturnType<typeof orca> | undefined)[],
  propagation: OrcaPropagationConfig | undefined,
  store: LoadStore = createLoadStore({ env: {} }),
): UpstreamLocalityStats {
  const stats = store.localityStats({
    server: SERVER,
    clusterName: "c",
    locality: { zone: "z" },
    ...(propagation ? { propagation } : {}),
  });
  for (const report of reports) {
    stats.callStarted();
    stats.callFinished("ok", report);
  }
  const locality = store.takeReport(SERVER, ALL).clusterStats[0]?.upstreamLocalityStats[0];
  if (!locality) throw new Error("no locality in the report");
  return locality;
}

/** `load_metric_stats` as name -> [total, count]. */
function named(locality: UpstreamLocalityStats): Record<string, [number, number]> {
  return Object.fromEntries(
    locality.loadMetricStats.map((m) => [m.metricName, [m.totalMetricValue, Number(m.numRequestsFinishedWithMetric)]]),
  );
}

function unnamed(locality: UpstreamLocalityStats) {
  const pick = (m: UpstreamLocalityStats["cpuUtilization"]) =>
    m === undefined ? undefined : [m.totalMetricValue, Number(m.numRequestsFinishedWithMetric)];
  return {
    cpu: pick(locality.cpuUtilization),
    mem: pick(locality.memUtilization),
    app: pick(locality.applicationUtilization),
  };
}

const A64_REPORTS = [orca({ namedMetrics: { k1: 1, k2: 2 } }), orca({ namedMetrics: { k2: 3, k3: 4 } }), orca({})];

describe("A64 (the A85 switch off)", () => {
  test("every named metric is summed per locality with the number of calls that reported it, unprefixed", () => {
    const locality = aggregate(A64_REPORTS, undefined, createLoadStore({ orcaLrsPropagation: false }));
    expect(named(locality)).toEqual({ k1: [1, 1], k2: [5, 2], k3: [4, 1] });
    expect(unnamed(locality)).toEqual({ cpu: undefined, mem: undefined, app: undefined });
  });

  test("a cluster config saying a64 gets the same with the switch on", () => {
    const locality = aggregate(A64_REPORTS, { mode: "a64" });
    expect(named(locality)).toEqual({ k1: [1, 1], k2: [5, 2], k3: [4, 1] });
  });

  test("with the switch off, an A85 selection is ignored: A64 for everything", () => {
    const store = createLoadStore({ env: { GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION: "FALSE" } });
    expect(store.orcaLrsPropagation).toBe(false);
    const locality = aggregate(
      [orca({ cpuUtilization: 0.5, namedMetrics: { foo: 1, bar: 2 } })],
      { cpuUtilization: true, namedMetrics: ["foo"] },
      store,
    );
    expect(named(locality)).toEqual({ foo: [1, 1], bar: [2, 1] });
    expect(unnamed(locality).cpu).toBeUndefined();
  });
});

describe("A85 (the switch on, the default)", () => {
  const report = orca({
    cpuUtilization: 0.5,
    memUtilization: 0.25,
    applicationUtilization: 0.75,
    namedMetrics: { foo: 10, bar: 20 },
  });

  // lrs_report_endpoint_metrics -> what one call with `report` adds to its locality.
  const table: [string, string[], ReturnType<typeof unnamed>, Record<string, [number, number]>][] = [
    ["unset: nothing", [], { cpu: undefined, mem: undefined, app: undefined }, {}],
    ["cpu_utilization", ["cpu_utilization"], { cpu: [0.5, 1], mem: undefined, app: undefined }, {}],
    ["mem_utilization", ["mem_utilization"], { cpu: undefined, mem: [0.25, 1], app: undefined }, {}],
    ["application_utilization", ["application_utilization"], { cpu: undefined, mem: undefined, app: [0.75, 1] }, {}],
    [
      "named_metrics.foo",
      ["named_metrics.foo"],
      { cpu: undefined, mem: undefined, app: undefined },
      { "named_metrics.foo": [10, 1] },
    ],
    [
      "named_metrics.*",
      ["named_metrics.*"],
      { cpu: undefined, mem: undefined, app: undefined },
      { "named_metrics.foo": [10, 1], "named_metrics.bar": [20, 1] },
    ],
    [
      "named_metrics.* beside a key",
      ["named_metrics.foo", "named_metrics.*"],
      { cpu: undefined, mem: undefined, app: undefined },
      { "named_metrics.foo": [10, 1], "named_metrics.bar": [20, 1] },
    ],
    ["a key the report lacks", ["named_metrics.baz"], { cpu: undefined, mem: undefined, app: undefined }, {}],
    [
      "unknown entries are ignored",
      ["unknown", "eps", "utilization.x", "named_metrics.", "foo"],
      { cpu: undefined, mem: undefined, app: undefined },
      {},
    ],
    [
      "scenario 62: the three utilizations, named_metrics.foo and an unknown entry",
      ["cpu_utilization", "mem_utilization", "application_utilization", "named_metrics.foo", "unknown"],
      { cpu: [0.5, 1], mem: [0.25, 1], app: [0.75, 1] },
      { "named_metrics.foo": [10, 1] },
    ],
  ];

  test.each(table)("%s", (_name, entries, expectedUnnamed, expectedNamed) => {
    const locality = aggregate([report], parseLrsReportEndpointMetrics(entries));
    expect(unnamed(locality)).toEqual(expectedUnnamed);
    expect(named(locality)).toEqual(expectedNamed);
  });

  test("the A64 example under named_metrics.*: the same sums, names prefixed", () => {
    expect(named(aggregate(A64_REPORTS, { namedMetrics: "all" }))).toEqual({
      "named_metrics.k1": [1, 1],
      "named_metrics.k2": [5, 2],
      "named_metrics.k3": [4, 1],
    });
  });

  test("zero utilizations: every call with a report adds (value, 1), zero included; calls without a report add nothing", () => {
    const locality = aggregate(
      [orca({ cpuUtilization: 0.8 }), orca({}), orca({ cpuUtilization: 0, memUtilization: 0.5 }), undefined],
      { cpuUtilization: true, memUtilization: true, applicationUtilization: true },
    );
    expect(unnamed(locality)).toEqual({ cpu: [0.8, 3], mem: [0.5, 3], app: [0, 3] });
    expect(Number(locality.totalSuccessfulRequests)).toBe(4);
  });

  test("a utilization no call reported (count 0) is left out of the report", () => {
    const locality = aggregate([undefined, undefined], { cpuUtilization: true });
    expect(locality.cpuUtilization).toBeUndefined();
  });

  test("the xds-client's parsed shape maps as is: allNamedMetrics and a key list", () => {
    const fromClient = {
      cpuUtilization: true,
      memUtilization: false,
      applicationUtilization: false,
      allNamedMetrics: false,
      namedMetrics: ["bar"],
    };
    const locality = aggregate([report], fromClient);
    expect(unnamed(locality)).toEqual({ cpu: [0.5, 1], mem: undefined, app: undefined });
    expect(named(locality)).toEqual({ "named_metrics.bar": [20, 1] });
    expect(named(aggregate([report], { ...fromClient, allNamedMetrics: true }))).toEqual({
      "named_metrics.foo": [10, 1],
      "named_metrics.bar": [20, 1],
    });
  });
});

describe("the A85 switch", () => {
  test("default on; the environment says false (any case) or true; an explicit option wins; other text is unset", () => {
    expect(resolveOrcaLrsPropagation(undefined, {})).toBe(true);
    expect(resolveOrcaLrsPropagation(undefined, { GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION: " False " })).toBe(false);
    expect(resolveOrcaLrsPropagation(undefined, { GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION: "true" })).toBe(true);
    expect(resolveOrcaLrsPropagation(undefined, { GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION: "0" })).toBe(true);
    expect(resolveOrcaLrsPropagation(true, { GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION: "false" })).toBe(true);
    expect(resolveOrcaLrsPropagation(false, {})).toBe(false);
  });

  test("read once when the store is created, not later", () => {
    const env: Record<string, string | undefined> = { GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION: "false" };
    const store = createLoadStore({ env });
    env.GRPC_EXPERIMENTAL_XDS_ORCA_LRS_PROPAGATION = "true";
    expect(store.orcaLrsPropagation).toBe(false);
  });
});

describe("counts, drops and deltas (scenario 60)", () => {
  test("issued, succeeded, errored and in-progress per locality; drops per category; each report a delta", () => {
    // 1. Two localities: a gets 3 calls (2 ok, 1 error) and 1 still running; b gets 1 ok call.
    // 2. Drops: 2 in category "lb", 1 in "throttle", 1 uncategorized.
    // 3. The first report carries all that; the second only what happened after (in-progress stays current).
    const clock = createVirtualClock();
    const store = createLoadStore({ env: {}, clock });
    const key = { server: SERVER, clusterName: "c", edsServiceName: "c-eds" };
    const a = store.localityStats({ ...key, locality: { region: "r", zone: "a" } });
    const b = store.localityStats({ ...key, locality: { region: "r", zone: "b", subZone: "s" } });
    const drops = store.dropStats(key);
    for (let i = 0; i < 4; i++) a.callStarted();
    a.callFinished("ok");
    a.callFinished("ok");
    a.callFinished("error");
    b.callStarted();
    b.callFinished("ok");
    drops.callDropped("lb");
    drops.callDropped("lb");
    drops.callDropped("throttle");
    drops.callDropped();
    clock.advance(2500);

    const first = store.takeReport(SERVER, ALL);
    expect(first.allZero).toBe(false);
    const [cluster] = first.clusterStats;
    expect(cluster?.clusterName).toBe("c");
    expect(cluster?.clusterServiceName).toBe("c-eds");
    expect(cluster?.loadReportInterval).toMatchObject({ seconds: 2n, nanos: 500_000_000 });
    expect(cluster?.totalDroppedRequests).toBe(4n);
    expect(cluster?.droppedRequests.map((d) => [d.category, d.droppedCount])).toEqual([
      ["lb", 2n],
      ["throttle", 1n],
    ]);
    const counts = (l: UpstreamLocalityStats | undefined) => [
      l?.locality?.zone,
      l?.locality?.subZone,
      l?.totalIssuedRequests,
      l?.totalSuccessfulRequests,
      l?.totalErrorRequests,
      l?.totalRequestsInProgress,
    ];
    expect(cluster?.upstreamLocalityStats.map(counts)).toEqual([
      ["a", "", 4n, 2n, 1n, 1n],
      ["b", "s", 1n, 1n, 0n, 0n],
    ]);

    a.callFinished("ok");
    clock.advance(1000);
    const second = store.takeReport(SERVER, ALL).clusterStats[0];
    expect(second?.upstreamLocalityStats.map(counts)).toEqual([
      ["a", "", 0n, 1n, 0n, 0n],
      ["b", "s", 0n, 0n, 0n, 0n],
    ]);
    expect(second?.totalDroppedRequests).toBe(0n);
    expect(second?.loadReportInterval).toMatchObject({ seconds: 1n, nanos: 0 });
    expect(store.takeReport(SERVER, ALL).allZero).toBe(true);
  });

  test("a released handle's last figures go into the next report once; then the locality is gone", () => {
    const store = createLoadStore({ env: {} });
    const stats = store.localityStats({ server: SERVER, clusterName: "c", locality: { zone: "a" } });
    stats.callStarted();
    stats.callFinished("ok");
    stats.release();
    stats.release();
    const first = store.takeReport(SERVER, ALL).clusterStats[0]?.upstreamLocalityStats;
    expect(first?.map((l) => l.totalSuccessfulRequests)).toEqual([1n]);
    expect(store.takeReport(SERVER, ALL).clusterStats).toEqual([]);
    expect(store.hasLoad(SERVER)).toBe(false);
  });

  test("a handle released with calls in flight stays until they finish; each figure is reported once", () => {
    const store = createLoadStore({ env: {} });
    const stats = store.localityStats({ server: SERVER, clusterName: "c", locality: { zone: "a" } });
    const counts = () => {
      const l = store.takeReport(SERVER, ALL).clusterStats[0]?.upstreamLocalityStats[0];
      return l && [l.totalIssuedRequests, l.totalSuccessfulRequests, l.totalErrorRequests, l.totalRequestsInProgress];
    };
    stats.callStarted();
    stats.callStarted();
    stats.callFinished("ok");
    stats.release();
    expect(counts()).toEqual([2n, 1n, 0n, 1n]);
    expect(store.hasLoad(SERVER)).toBe(true);
    expect(counts()).toEqual([0n, 0n, 0n, 1n]);
    stats.callFinished("error");
    expect(store.hasLoad(SERVER)).toBe(true);
    expect(counts()).toEqual([0n, 0n, 1n, 0n]);
    expect(store.hasLoad(SERVER)).toBe(false);
    stats.callStarted(); // released and idle: not counted
    expect(store.takeReport(SERVER, ALL).clusterStats).toEqual([]);
  });

  test("two handles of one locality (say two channels) are reported as one locality", () => {
    const store = createLoadStore({ env: {} });
    const key = { server: SERVER, clusterName: "c", locality: { zone: "a" } };
    const one = store.localityStats({ ...key, propagation: { namedMetrics: "all" } });
    const two = store.localityStats(key);
    one.callStarted();
    one.callFinished("ok", orca({ namedMetrics: { q: 2 } }));
    two.callStarted();
    two.callFinished("error", orca({ namedMetrics: { q: 5 } }));
    const [locality] = store.takeReport(SERVER, ALL).clusterStats[0]?.upstreamLocalityStats ?? [];
    expect([locality?.totalIssuedRequests, locality?.totalSuccessfulRequests, locality?.totalErrorRequests]).toEqual([
      2n,
      1n,
      1n,
    ]);
    // Only the first handle propagates named metrics (the second's cluster config left the field unset).
    expect(named(locality as UpstreamLocalityStats)).toEqual({ "named_metrics.q": [2, 1] });
  });

  test("clusters the server did not ask for are not reported, and their figures are not kept for later", () => {
    const store = createLoadStore({ env: {} });
    const wanted = store.localityStats({ server: SERVER, clusterName: "wanted", locality: {} });
    const other = store.localityStats({ server: SERVER, clusterName: "other", locality: {} });
    wanted.callStarted();
    other.callStarted();
    const report = store.takeReport(SERVER, { sendAllClusters: false, clusters: new Set(["wanted"]) });
    expect(report.clusterStats.map((c) => c.clusterName)).toEqual(["wanted"]);
    const later = store.takeReport(SERVER, ALL).clusterStats.find((c) => c.clusterName === "other");
    expect(later?.upstreamLocalityStats[0]?.totalIssuedRequests).toBe(0n);
  });
});
