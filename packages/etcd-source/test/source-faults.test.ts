// A replica when etcd misbehaves: unreachable at start, killed and restarted while serving, cut off while its
// history is compacted, refusing credentials.
import { buildCluster, CDS_TYPE_URL } from "@xdskit/control-plane";
import { Cluster_LbPolicy } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { describe, expect, it } from "vitest";
import { EtcdError } from "../src/index.js";
import { connect, hasEtcd, testEtcd } from "./support/etcd.js";
import { startReplica, until, writeResources } from "./support/replica.js";
import { tcpProxy } from "./support/tcp-proxy.js";
import { watchClusters } from "./support/watcher.js";

const clusters = (...names: string[]) => names.map((name) => ({ resource: buildCluster({ name }) }));

describe.skipIf(!hasEtcd)("etcd source faults", () => {
  it("waits for an unreachable etcd, serving nothing until it has read the prefix", async () => {
    const etcd = await testEtcd();
    await writeResources(connect(etcd), clusters("a"));
    await etcd.stop();
    const replica = await startReplica(connect(etcd));
    await until(
      () => replica.statuses.some((s) => s.state === "connecting" && s.error !== undefined),
      "a failed attempt",
    );
    expect(replica.statuses[0]).toMatchObject({ state: "connecting", revision: 0, error: { kind: "unavailable" } });
    expect(replica.log).toContainEqual(expect.stringMatching(/^info \[etcd-source\] waiting for etcd: /));
    expect(replica.server.resourceNames(CDS_TYPE_URL)).toEqual([]);

    await etcd.start();
    await replica.source.ready;
    expect(replica.server.resourceNames(CDS_TYPE_URL)).toEqual(["a"]);
    expect(replica.source.status.state).toBe("watching");
  });

  it("keeps serving its revision while etcd is down, then resumes from it", async () => {
    // 1. A replica serves a, a client watches it.
    // 2. etcd is killed: the replica says so, keeps serving; the client hears nothing.
    // 3. etcd restarts: the replica watches again from its revision (no full read); a change arrives.
    const etcd = await testEtcd();
    const conn = connect(etcd);
    await writeResources(conn, clusters("a"));
    const replica = await startReplica(conn);
    const served = await replica.source.ready;
    const client = watchClusters(replica.server.address, ["a"]);
    const first = await client.next("a", 1);

    await etcd.kill();
    await until(() => replica.source.status.state === "disconnected", "the replica to notice");
    expect(replica.source.status).toMatchObject({ state: "disconnected", revision: served });
    expect(replica.log).toContainEqual(
      expect.stringMatching(new RegExp(`etcd unavailable .*; serving revision ${served} until it is back`)),
    );
    expect(replica.server.resourceNames(CDS_TYPE_URL)).toEqual(["a"]);

    await etcd.start();
    await until(() => replica.source.status.state === "watching", "the replica to watch again", 15_000);
    const changed = await writeResources(conn, [
      { resource: buildCluster({ name: "a", lbPolicy: Cluster_LbPolicy.RING_HASH }) },
    ]);
    await replica.source.waitForRevision(changed);
    expect((await client.next("a", 2)).version).not.toBe(first.version);
    expect(client.events.get("a")?.map((e) => e.kind)).toEqual(["resource", "resource"]);
    expect(replica.changes.map((c) => c.cause)).toEqual(["load", "watch"]);
  });

  it("notices an etcd that stops answering without closing the connection, and comes back to it", async () => {
    const etcd = await testEtcd();
    const conn = connect(etcd);
    const proxy = await tcpProxy(etcd.endpoint);
    await writeResources(conn, clusters("a"));
    const replica = await startReplica(connect(proxy.endpoint, { requestTimeoutMs: 1_000 }), {
      progressIntervalMs: 200,
      progressTimeoutMs: 200,
    });
    const served = await replica.source.ready;
    proxy.freeze();
    await until(() => replica.source.status.state === "disconnected", "the replica to notice the silence");
    expect(replica.source.status.error?.message).toMatch(
      /etcd did not answer a progress request within 200 ms|deadline/,
    );
    expect(replica.server.resourceNames(CDS_TYPE_URL)).toEqual(["a"]);
    const next = await writeResources(conn, clusters("a", "b"));
    proxy.thaw();
    await replica.source.waitForRevision(next);
    expect(replica.server.resourceNames(CDS_TYPE_URL)).toEqual(["a", "b"]);
    expect(replica.changes.map((c) => c.cause)).toEqual(["load", "watch"]);
    expect(served).toBeLessThan(next);
  });

  it("reads everything again after a compaction past its revision, pushing only what changed", async () => {
    // 1. A replica serves a, b, c through a proxy; a client watches all three.
    // 2. The proxy is cut; a changes, b goes, d comes; etcd compacts its history past the replica's revision.
    // 3. The proxy is restored: the watch is refused as compacted, the replica reads the prefix again and applies
    //    the difference: the client hears of a and b only, c's watcher nothing.
    const etcd = await testEtcd();
    const conn = connect(etcd);
    const proxy = await tcpProxy(etcd.endpoint);
    await writeResources(conn, clusters("a", "b", "c"));
    const replica = await startReplica(connect(proxy.endpoint));
    await replica.source.ready;
    const client = watchClusters(replica.server.address, ["a", "b", "c", "d"]);
    await Promise.all(["a", "b", "c", "d"].map((name) => client.next(name, 1)));

    proxy.cut();
    await until(() => replica.source.status.state === "disconnected", "the replica to lose etcd");
    const changedA = { resource: buildCluster({ name: "a", lbPolicy: Cluster_LbPolicy.RING_HASH }) };
    await writeResources(conn, [changedA, ...clusters("b", "c")]);
    const latest = await writeResources(conn, [changedA, ...clusters("c", "d")]);
    await conn.compact(latest);
    proxy.restore();
    await replica.source.waitForRevision(latest);
    expect(replica.changes.map(({ cause, set, removed }) => ({ cause, set, removed }))).toEqual([
      { cause: "load", set: 3, removed: 0 },
      { cause: "resync", set: 2, removed: 1 },
    ]);
    const names = (list: readonly { name: string }[]) => list.map((r) => r.name);
    const resync = replica.changes[1]!.resources;
    expect([names(resync.added), names(resync.changed), names(resync.removed)]).toEqual([["d"], ["a"], ["b"]]);
    expect(replica.log).toContainEqual(expect.stringMatching(/etcd compacted its history past revision \d+/));
    await client.next("a", 2);
    await client.next("d", 2);
    expect(client.events.get("c")).toHaveLength(1);
    expect(client.events.get("a")?.map((e) => e.kind)).toEqual(["resource", "resource"]);
    expect(client.events.get("d")?.map((e) => e.kind)).toEqual(["error", "resource"]);
    expect(replica.server.resourceNames(CDS_TYPE_URL).sort()).toEqual(["a", "c", "d"]);
  });

  it("refuses to start with wrong credentials, and serves with the right ones", async () => {
    const etcd = await testEtcd();
    const admin = connect(etcd);
    await writeResources(admin, clusters("a"));
    await admin.auth.userAdd({ name: "root", password: "right" });
    await admin.auth.userGrantRole({ user: "root", role: "root" });
    await admin.auth.authEnable({});

    const wrong = await startReplica(connect(etcd, { auth: { user: "root", password: "wrong" } }));
    const refusal = await wrong.source.ready.catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(EtcdError);
    expect(refusal).toMatchObject({
      kind: "auth-failed",
      message: expect.stringMatching(/user name or password was refused/),
    });
    expect(wrong.source.status.state).toBe("closed");
    expect(wrong.server.resourceNames(CDS_TYPE_URL)).toEqual([]);

    const anonymous = await startReplica(connect(etcd));
    expect(await anonymous.source.ready.catch((error: EtcdError) => error.kind)).toBe("auth-required");

    const right = await startReplica(connect(etcd, { auth: { user: "root", password: "right" } }));
    await right.source.ready;
    expect(right.server.resourceNames(CDS_TYPE_URL)).toEqual(["a"]);
  });
});
