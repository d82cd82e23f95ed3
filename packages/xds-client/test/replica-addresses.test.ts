// Replicas of one server named by one server_uri (`ipv4:a,b,c`, as gRPC's targets name an address list): the client
// uses one address at a time and, when a stream fails before any response, goes on to the next address at once,
// telling its watchers nothing until every address has failed. Real HTTP/2 against @xdskit/control-plane servers
// holding the same resources with content versions (docs/decisions.md#replicas-in-a-bootstrap).
import { buildCluster, createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { Cluster_LbPolicy } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { afterEach, describe, expect, it } from "vitest";
import { clusterResourceType, createXdsClient, type XdsClient } from "../src/index.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function replicas(count: number): Promise<ManagementServer[]> {
  const servers: ManagementServer[] = [];
  for (let i = 0; i < count; i++) {
    const server = await createManagementServer({ contentVersions: true });
    closers.push(() => server.close());
    servers.push(server);
  }
  return servers;
}

type Event = { kind: "resource"; version: string; lb: string } | { kind: "error" | "ambient"; message: string };

function watch(servers: readonly ManagementServer[], delta: boolean) {
  const uri = `ipv4:${servers.map((s) => s.address).join(",")}`;
  const client: XdsClient = createXdsClient({
    bootstrap: {
      xds_servers: [
        {
          server_uri: uri,
          channel_creds: [{ type: "insecure" }],
          ...(delta ? { api_type: "DELTA_GRPC" as const } : {}),
        },
      ],
      node: { id: "replicas" },
    },
    env: {},
  });
  closers.push(() => client.close());
  const events: Event[] = [];
  let notify = () => {};
  client.watch(clusterResourceType, "a", {
    onResourceChanged(result) {
      events.push(
        result.ok
          ? { kind: "resource", version: result.version, lb: JSON.stringify(result.resource.lbPolicy) }
          : { kind: "error", message: result.error.message },
      );
      notify();
    },
    onAmbientError(error) {
      events.push({ kind: "ambient", message: error.message });
      notify();
    },
  });
  const eventCount = (count: number) =>
    new Promise<void>((resolve) => {
      notify = () => {
        if (events.length >= count) resolve();
      };
      notify();
    });
  return { client, events, eventCount };
}

function setEverywhere(servers: readonly ManagementServer[], policy?: Cluster_LbPolicy): void {
  for (const server of servers)
    server.setResource(buildCluster({ name: "a", ...(policy ? { lbPolicy: policy } : {}) }));
}

describe.each([
  ["state of the world", false],
  ["delta", true],
])("%s: replicas in one server_uri", (_, delta) => {
  it("moves to the next replica when its own dies, without telling the watchers, and gets a change made meanwhile", async () => {
    // 1. Three replicas hold cluster a; the client reads it from the first.
    // 2. The first dies; the cluster changes on the others while the client moves on: the watcher gets the change,
    //    once, and nothing else.
    // 3. The second dies too (the first is back, with the same content): the client moves again; nothing is told.
    const servers = await replicas(3);
    setEverywhere(servers);
    const { events, eventCount } = watch(servers, delta);
    await eventCount(1);
    expect(events[0]).toMatchObject({ kind: "resource" });

    await servers[0]!.stop();
    setEverywhere(servers.slice(1), Cluster_LbPolicy.RING_HASH);
    await eventCount(2);
    expect(events[1]).toMatchObject({ kind: "resource", lb: expect.stringContaining("ring_hash") });

    setEverywhere([servers[0]!], Cluster_LbPolicy.RING_HASH);
    await servers[0]!.start();
    await servers[1]!.stop();
    await servers[2]!.hooks.waitForRequest(undefined, { timeoutMs: 10_000 });
    if (delta) {
      // The subscription named the version the client holds, the same on every replica: nothing was sent.
      expect(JSON.stringify(servers[2]!.hooks.history().filter((e) => e.type === "response"))).toBe("[]");
    }
    // A change on the replica in use arrives next: nothing came between.
    setEverywhere(servers, Cluster_LbPolicy.LEAST_REQUEST);
    await eventCount(3);
    expect(events.map((e) => e.kind)).toEqual(["resource", "resource", "resource"]);
    expect(events[2]).toMatchObject({ lb: expect.stringContaining("least_request") });
    expect(new Set(events.map((e) => (e as { version: string }).version)).size).toBe(3);
  });

  it("moves again and again when nothing changed, though a delta replica then sends nothing", async () => {
    // 1. Two replicas; the client reads cluster a from the first.
    // 2. Three times: the replica in use stops (the other is up): the client moves to the other; nothing changed, so
    //    a delta stream is sent nothing. After a second there (the behaviour under test: a stream that stayed open
    //    that long shows its replica works), the stopped one starts again.
    // 3. A change: the watcher's next event; it heard nothing in between, no error above all.
    const servers = await replicas(2);
    setEverywhere(servers);
    const { events, eventCount } = watch(servers, delta);
    await eventCount(1);
    let current = 0;
    for (let round = 0; round < 3; round++) {
      const other = servers[1 - current]!;
      const mark = other.hooks.mark();
      await servers[current]!.stop();
      await other.hooks.waitForRequest(undefined, { after: mark, timeoutMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      await servers[current]!.start();
      current = 1 - current;
    }
    setEverywhere(servers, Cluster_LbPolicy.RING_HASH);
    await eventCount(2);
    expect(events.map((e) => e.kind)).toEqual(["resource", "resource"]);
  });

  it("starts on the first replica that answers, and tells the watchers of a failure only once every one failed", async () => {
    const servers = await replicas(3);
    setEverywhere(servers);
    await servers[0]!.stop();
    await servers[1]!.stop();
    const { events, eventCount } = watch(servers, delta);
    await eventCount(1);
    expect(events).toEqual([expect.objectContaining({ kind: "resource" })]);

    await servers[2]!.stop();
    await eventCount(2);
    expect(events[1]).toMatchObject({ kind: "ambient", message: expect.stringMatching(/failed with no responses/) });
    await servers[1]!.start();
    // Back on a replica with the same resource; the next change is the next thing the watcher hears.
    await servers[1]!.hooks.waitForRequest(undefined, { timeoutMs: 15_000 });
    setEverywhere(servers, Cluster_LbPolicy.RING_HASH);
    await eventCount(3);
    expect(events.map((e) => e.kind)).toEqual(["resource", "ambient", "resource"]);
  });
});
