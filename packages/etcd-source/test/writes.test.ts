// Writing to etcd (planEtcdChange, applyEtcdChange) against a real etcd: what a plan finds, one transaction per
// change when it fits, a dependency-safe split when it does not, values too large for etcd, and two writers at once.

import { fromBinary } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  CDS_TYPE_URL,
  EDS_TYPE_URL,
  LDS_TYPE_URL,
  type ManagementServer,
  RDS_TYPE_URL,
} from "@xdskit/control-plane";
import { Cluster_LbPolicy } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { RouteConfigurationSchema } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import { describe, expect, it } from "vitest";
import {
  applyEtcdChange,
  countTransactions,
  EtcdConflictError,
  EtcdError,
  type EtcdResource,
  EtcdValueTooLargeError,
  planEtcdChange,
  prefixRange,
  readEtcdResources,
} from "../src/index.js";
import { connect, hasEtcd, testEtcd } from "./support/etcd.js";
import { startReplica, writeResources } from "./support/replica.js";

/** A listener → route → cluster → endpoints chain named after `n`. */
function chain(n: string, cluster = n): EtcdResource[] {
  return [
    { resource: buildListener({ name: `l${n}`, routeConfigName: `r${n}` }) },
    { resource: buildRouteConfiguration({ name: `r${n}`, cluster: `c${cluster}` }) },
    { resource: buildCluster({ name: `c${cluster}` }) },
    {
      resource: buildClusterLoadAssignment({
        clusterName: `c${cluster}`,
        localities: [{ zone: "z", endpoints: ["127.0.0.1:1"] }],
      }),
    },
  ];
}

/** Every listener's route, every route's cluster and every cluster's endpoints are served. */
function dependencySafe(server: ManagementServer): boolean {
  const has = (type: string, name: string) => server.resourceNames(type).includes(name);
  return (
    server.resourceNames(LDS_TYPE_URL).every((l) => has(RDS_TYPE_URL, `r${l.slice(1)}`)) &&
    server.resourceNames(RDS_TYPE_URL).every((r) => {
      // Served as the bytes read from etcd: the server holds them packed.
      const route = fromBinary(RouteConfigurationSchema, (server.getResource(RDS_TYPE_URL, r) as Any).value);
      const action = route.virtualHosts[0]!.routes[0]!.action;
      return action.case === "route" && action.value.clusterSpecifier.case === "cluster"
        ? has(CDS_TYPE_URL, action.value.clusterSpecifier.value)
        : false;
    }) &&
    server.resourceNames(CDS_TYPE_URL).every((c) => has(EDS_TYPE_URL, c))
  );
}

describe.skipIf(!hasEtcd)("etcd writes", () => {
  it("plans added, changed and removed keys against one revision, and ignores a change of encoding only", async () => {
    const etcd = await testEtcd();
    const conn = connect(etcd);
    await writeResources(conn, [{ resource: buildCluster({ name: "a" }) }, { resource: buildCluster({ name: "b" }) }], {
      valueFormat: "json",
    });
    const plan = await planEtcdChange({
      etcd: conn,
      resources: [
        { resource: buildCluster({ name: "a" }) },
        { resource: buildCluster({ name: "c" }) },
        { resource: buildCluster({ name: "b", lbPolicy: Cluster_LbPolicy.RING_HASH }) },
      ],
    });
    expect(plan.unchanged).toBe(1);
    expect(plan.puts.map((p) => `${p.kind} ${p.resource.name}`).sort()).toEqual(["added c", "changed b"]);
    expect(plan.deletes).toEqual([]);
    const emptied = await planEtcdChange({ etcd: conn, resources: [] });
    expect(emptied.deletes.map((d) => d.resource?.name).sort()).toEqual(["a", "b"]);
    await expect(
      planEtcdChange({ etcd: conn, resources: [{ resource: buildCluster({ name: "a" }), name: "z" }] }),
    ).rejects.toThrow(/"a" given the name "z"/);
    await expect(
      planEtcdChange({
        etcd: conn,
        resources: [{ resource: buildCluster({ name: "a" }) }, { resource: buildCluster({ name: "a" }) }],
      }),
    ).rejects.toThrow(/given twice/);
  });

  it("splits a change past etcd's limits into transactions a replica applies in dependency-safe order", async () => {
    // 1. etcd takes at most 8 operations per transaction; 10 chains (40 resources) are written: 6 transactions.
    // 2. Every state the replica goes through has each listener's route, route's cluster and cluster's endpoints.
    // 3. The chains are re-pointed at new clusters and the old clusters removed: the same holds on the way.
    const etcd = await testEtcd({ maxTxnOps: 8 });
    const conn = connect(etcd);
    const states: { revision: number; safe: boolean }[] = [];
    const replica = await startReplica(conn, {
      onChange: (change) => states.push({ revision: change.revision, safe: dependencySafe(replica.server) }),
    });
    await replica.source.ready;
    const original = Array.from({ length: 10 }, (_, i) => chain(String(i))).flat();
    const plan = await planEtcdChange({ etcd: conn, resources: original });
    expect(countTransactions(plan, { maxTxnOps: 8 })).toBe(6);
    const first = await applyEtcdChange(conn, plan, { limits: { maxTxnOps: 8 } });
    expect(first.transactions).toBe(6);
    await replica.source.waitForRevision(first.revision);
    const moved = Array.from({ length: 10 }, (_, i) => chain(String(i), `${i}-new`)).flat();
    const second = await writeResources(conn, moved, { limits: { maxTxnOps: 8 } });
    await replica.source.waitForRevision(second);
    const clusterNames = moved
      .filter((r) => r.resource.$typeName.endsWith(".Cluster"))
      .map((r) => (r.resource as unknown as { name: string }).name);
    expect(replica.server.resourceNames(CDS_TYPE_URL).sort()).toEqual(clusterNames.sort());
    // The load, then at least one change per transaction (etcd may batch several revisions in one watch response).
    expect(states.length).toBeGreaterThanOrEqual(3);
    expect(states.filter((s) => !s.safe)).toEqual([]);
  });

  it("refuses a value larger than one etcd request, naming it, and writes nothing", async () => {
    const etcd = await testEtcd({ maxRequestBytes: 64 * 1024 });
    const conn = connect(etcd);
    const endpoints = Array.from({ length: 6000 }, (_, i) => `10.${(i >> 8) & 255}.${i & 255}.1:8080`);
    const huge = buildClusterLoadAssignment({ clusterName: "huge", localities: [{ zone: "z", endpoints }] });
    const plan = await planEtcdChange({
      etcd: conn,
      resources: [{ resource: buildCluster({ name: "huge" }) }, { resource: huge }],
    });
    // Told etcd's limit: refused before writing.
    const refused = await applyEtcdChange(conn, plan, { limits: { maxRequestBytes: 64 * 1024 } }).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(EtcdValueTooLargeError);
    expect((refused as Error).message).toMatch(
      /^\/xds\/resources\/envoy.config.endpoint.v3.ClusterLoadAssignment\/huge: \d+ bytes, more than one etcd request can carry .* nothing was written$/,
    );
    // Not told: etcd refuses it, and says so.
    const tooLarge = await applyEtcdChange(conn, plan).catch((e: unknown) => e);
    expect(tooLarge).toBeInstanceOf(EtcdError);
    expect(tooLarge).toMatchObject({
      kind: "too-large",
      message: expect.stringMatching(/--max-request-bytes.*nothing was written$/),
    });
    const { key, rangeEnd } = prefixRange("/xds");
    expect((await conn.range({ key, rangeEnd, countOnly: true })).count).toBe(0);
  });

  it("lets one of two changes planned at once win whole, and tells the other", async () => {
    const etcd = await testEtcd();
    const conn = connect(etcd);
    await writeResources(conn, [{ resource: buildCluster({ name: "start" }) }]);
    const ours = await planEtcdChange({ etcd: conn, resources: [{ resource: buildCluster({ name: "ours" }) }] });
    const theirs = await planEtcdChange({
      etcd: conn,
      resources: [{ resource: buildCluster({ name: "theirs" }) }, { resource: buildCluster({ name: "start" }) }],
    });
    const results = await Promise.allSettled([
      applyEtcdChange(conn, ours, { writer: "ours" }),
      applyEtcdChange(conn, theirs, { writer: "theirs" }),
    ]);
    const won = results.findIndex((r) => r.status === "fulfilled");
    const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(won).toBeGreaterThanOrEqual(0);
    expect(lost.reason).toBeInstanceOf(EtcdConflictError);
    expect(lost.reason).toMatchObject({ written: 0, plannedRevision: ours.revision });
    expect(lost.reason.message).toMatch(
      /another writer changed \/xds\/ after revision \d+ \(.*"writer":"(ours|theirs)".*\); nothing of this change was written/,
    );
    const names = (await readEtcdResources({ etcd: conn })).resources.map((r) => r.resource.name).sort();
    expect(names).toEqual(won === 0 ? ["ours"] : ["start", "theirs"]);
  });

  it("writes and serves a large set", async () => {
    // 2,000 chains' clusters and endpoints (4,000 resources) in 32 transactions; a replica started after reads them
    // all; one started before follows them.
    const etcd = await testEtcd();
    const conn = connect(etcd);
    const before = await startReplica(conn);
    await before.source.ready;
    const resources = Array.from({ length: 2000 }, (_, i) => chain(String(i)).slice(2)).flat();
    const revision = await writeResources(conn, resources);
    const after = await startReplica(conn, { pageSize: 300 });
    expect(await after.source.ready).toBe(revision);
    await before.source.waitForRevision(revision);
    for (const replica of [before, after]) {
      expect(replica.server.resourceNames(CDS_TYPE_URL)).toHaveLength(2000);
      expect(replica.server.resourceNames(EDS_TYPE_URL)).toHaveLength(2000);
    }
    expect(before.changes.filter((c) => c.cause === "watch").reduce((n, c) => n + c.set, 0)).toBe(4000);
  });
});
