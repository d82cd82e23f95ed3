// A replica fed from etcd (createEtcdSource) against a real etcd: what it serves after its first read and as it
// watches, versions that agree between replicas, bad keys and values, node sets and TP2 variants.
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  CDS_TYPE_URL,
} from "@xdskit/control-plane";
import { Cluster_LbPolicy } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { describe, expect, it } from "vitest";
import { resourceKey } from "../src/index.js";
import { connect, hasEtcd, testEtcd } from "./support/etcd.js";
import { startReplica, writeResources } from "./support/replica.js";
import { watchClusters } from "./support/watcher.js";

const key = (name: string, extra: { constraints?: string; nodeId?: string } = {}) =>
  resourceKey("/xds", { typeUrl: CDS_TYPE_URL, name, ...extra });

describe.skipIf(!hasEtcd)("etcd source", () => {
  it("serves what it read at one revision, then each etcd transaction it watches as one change", async () => {
    // 1. Two resources written; a replica starts and reads them at that revision.
    // 2. A Listener and its RouteConfiguration written in one transaction reach the server as one change.
    // 3. A removal is applied; the server drops the resource.
    const etcd = await testEtcd();
    const conn = connect(etcd);
    const first = await writeResources(conn, [
      { resource: buildCluster({ name: "a" }) },
      {
        resource: buildClusterLoadAssignment({
          clusterName: "a",
          localities: [{ zone: "z", endpoints: ["127.0.0.1:1"] }],
        }),
      },
    ]);
    const replica = await startReplica(conn);
    expect(await replica.source.ready).toBe(first);
    expect(replica.server.resourceNames(CDS_TYPE_URL)).toEqual(["a"]);
    expect(replica.changes).toMatchObject([{ cause: "load", revision: first, set: 2, removed: 0, skipped: [] }]);

    const second = await writeResources(conn, [
      { resource: buildCluster({ name: "a" }) },
      {
        resource: buildClusterLoadAssignment({
          clusterName: "a",
          localities: [{ zone: "z", endpoints: ["127.0.0.1:1"] }],
        }),
      },
      { resource: buildListener({ name: "l", routeConfigName: "r" }) },
      { resource: buildRouteConfiguration({ name: "r", cluster: "a" }) },
    ]);
    await replica.source.waitForRevision(second);
    expect(replica.changes.slice(1)).toMatchObject([
      { cause: "watch", revision: second, set: 2, removed: 0, skipped: [] },
    ]);
    expect(replica.changes[1]?.resources.added.map((r) => r.name).sort()).toEqual(["l", "r"]);
    expect(replica.server.getResource("type.googleapis.com/envoy.config.listener.v3.Listener", "l")).toBeDefined();

    const third = await writeResources(conn, [{ resource: buildCluster({ name: "a" }) }]);
    await replica.source.waitForRevision(third);
    expect(replica.changes.slice(2)).toMatchObject([
      { cause: "watch", revision: third, set: 0, removed: 3, skipped: [] },
    ]);
    expect(replica.changes[2]?.resources.removed.map((r) => r.name).sort()).toEqual(["a", "l", "r"]);
    expect(replica.server.getResource("type.googleapis.com/envoy.config.listener.v3.Listener", "l")).toBeUndefined();
    expect(replica.source.status).toEqual({ state: "watching", revision: third });
  });

  it("carries on when a callback of its caller throws", async () => {
    const etcd = await testEtcd();
    const conn = connect(etcd);
    const replica = await startReplica(conn, {
      onChange: () => {
        throw new Error("a bug of the caller");
      },
    });
    await replica.source.ready;
    const revision = await writeResources(conn, [{ resource: buildCluster({ name: "a" }) }]);
    await replica.source.waitForRevision(revision);
    expect(replica.server.resourceNames(CDS_TYPE_URL)).toEqual(["a"]);
    expect(replica.log).toContainEqual(
      expect.stringMatching(/^error \[etcd-source\] the onChange callback threw; the source carries on/),
    );
  });

  it("gives a resource the same version on every replica, and the same after a restart", async () => {
    const etcd = await testEtcd();
    const conn = connect(etcd);
    await writeResources(conn, [{ resource: buildCluster({ name: "a" }) }]);
    const one = await startReplica(conn);
    const two = await startReplica(conn);
    await Promise.all([one.source.ready, two.source.ready]);
    const onOne = watchClusters(one.server.address, ["a"]);
    const onTwo = watchClusters(two.server.address, ["a"]);
    const [a1, a2] = await Promise.all([onOne.next("a", 1), onTwo.next("a", 1)]);
    expect(a1.kind).toBe("resource");
    expect(a1.version).toBe(a2.version);

    await writeResources(conn, [{ resource: buildCluster({ name: "a", lbPolicy: Cluster_LbPolicy.RING_HASH }) }]);
    const [b1, b2] = await Promise.all([onOne.next("a", 2), onTwo.next("a", 2)]);
    expect(b1.version).toBe(b2.version);
    expect(b1.version).not.toBe(a1.version);

    const three = await startReplica(conn);
    await three.source.ready;
    const onThree = watchClusters(three.server.address, ["a"]);
    expect((await onThree.next("a", 1)).version).toBe(b1.version);
  });

  it("skips a key it cannot serve with a warning naming it, and serves the rest", async () => {
    // 1. Good and bad keys: garbage bytes, JSON, a key outside the layout, a message named unlike its key.
    // 2. A bad new value for a served key keeps the previous value served; fixing a bad key serves it.
    const etcd = await testEtcd();
    const conn = connect(etcd);
    await writeResources(conn, [{ resource: buildCluster({ name: "a" }) }]);
    const json = JSON.stringify({
      "@type": CDS_TYPE_URL,
      name: "c",
      type: "EDS",
      edsClusterConfig: { edsConfig: { ads: {} } },
    });
    await conn.put(Buffer.from(key("b")), Buffer.from("not a cluster"));
    await conn.put(Buffer.from(key("c")), Buffer.from(json));
    await conn.put(Buffer.from("/xds/resources/envoy.config.cluster.v3.Cluster"), Buffer.from("x"));
    await conn.put(Buffer.from(key("d")), Buffer.from(JSON.stringify({ name: "other" })));
    // A variant that overlaps the unconstrained one, on a server that refuses overlaps.
    await writeResources(conn, [{ resource: buildCluster({ name: "a" }), constraints: "env=prod" }], {
      replace: false,
    });
    const replica = await startReplica(conn);
    await replica.source.ready;
    expect(replica.server.resourceNames(CDS_TYPE_URL).sort()).toEqual(["a", "c"]);
    const warnings = replica.log.filter((line) => line.startsWith("warn"));
    expect(warnings).toEqual([
      expect.stringMatching(/skipping etcd key \/xds\/resources\/envoy.config.cluster.v3.Cluster: not a resource key/),
      expect.stringMatching(
        /skipping etcd key \/xds\/resources\/envoy.config.cluster.v3.Cluster\/b: does not decode as envoy.config.cluster.v3.Cluster/,
      ),
      expect.stringMatching(
        /skipping etcd key \/xds\/resources\/envoy.config.cluster.v3.Cluster\/d: the message is named "other", the key "d"/,
      ),
      expect.stringMatching(
        /skipping etcd key \/xds\/resources\/envoy.config.cluster.v3.Cluster\/a\/env=prod: refused by the server: variants of a .* overlap/,
      ),
    ]);
    expect(
      replica.source
        .skipped()
        .map((s) => s.key)
        .sort(),
    ).toEqual(
      [
        "/xds/resources/envoy.config.cluster.v3.Cluster",
        key("b"),
        key("d"),
        key("a", { constraints: "env=prod" }),
      ].sort(),
    );
    const client = watchClusters(replica.server.address, ["a", "b"]);
    const served = await client.next("a", 1);

    const broken = await conn.put(Buffer.from(key("a")), Buffer.from("\xff\xff"));
    await replica.source.waitForRevision(broken);
    expect(replica.log.at(-1)).toMatch(/\/a: does not decode .*; its previous value is still served/);
    expect(replica.server.resourceNames(CDS_TYPE_URL)).toContain("a");

    const fixed = await writeResources(
      conn,
      [{ resource: buildCluster({ name: "a" }) }, { resource: buildCluster({ name: "b" }) }],
      {
        replace: false,
      },
    );
    await replica.source.waitForRevision(fixed);
    expect((await client.next("b", 1)).kind).toBe("error"); // does not exist, before the fix
    expect((await client.next("b", 2)).kind).toBe("resource");
    expect(replica.source.skipped().map((s) => s.key)).not.toContain(key("b"));
    // a's bytes are those served before it broke: its watcher hears nothing new.
    expect(client.events.get("a")).toEqual([served]);
  });

  it("serves node sets to their node ids and TP2 variants by dynamic parameters", async () => {
    const etcd = await testEtcd();
    const conn = connect(etcd);
    await writeResources(conn, [
      { resource: buildCluster({ name: "a" }) },
      { resource: buildCluster({ name: "a", edsServiceName: "prod" }), constraints: "env=prod" },
      { resource: buildCluster({ name: "a", edsServiceName: "special" }), nodeId: "special" },
    ]);
    // The unconstrained variant overlaps env=prod: the most specific match is served.
    const replica = await startReplica(conn, { serverOptions: { allowOverlappingVariants: true } });
    await replica.source.ready;
    const plain = watchClusters(replica.server.address, ["a"]);
    const prod = watchClusters(replica.server.address, ["a"], { dynamicParameters: { env: "prod" } });
    const special = watchClusters(replica.server.address, ["a"], { nodeId: "special" });
    expect(((await plain.next("a", 1)).resource as { edsServiceName?: string } | undefined)?.edsServiceName).toBe("");
    expect(((await prod.next("a", 1)).resource as { edsServiceName?: string } | undefined)?.edsServiceName).toBe(
      "prod",
    );
    expect(((await special.next("a", 1)).resource as { edsServiceName?: string } | undefined)?.edsServiceName).toBe(
      "special",
    );

    // The node's last key removed: it is served the default set again.
    const removed = await writeResources(conn, [], {
      replace: false,
      remove: [{ typeUrl: CDS_TYPE_URL, name: "a", nodeId: "special" }],
    });
    await replica.source.waitForRevision(removed);
    expect(((await special.next("a", 2)).resource as { edsServiceName?: string } | undefined)?.edsServiceName).toBe("");
  });
});
