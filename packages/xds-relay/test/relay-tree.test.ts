// A two-level tree over real HTTP/2: control plane -> relay 1 -> relay 2 -> clients. Each level is one stream to
// the level above, with one subscription per (name, parameter map); variants, updates and removals cross both.
import { buildCluster, buildClusterLoadAssignment, CDS_TYPE_URL, EDS_TYPE_URL } from "@xdskit/control-plane";
import { clusterResourceType, endpointResourceType } from "@xdskit/xds-client";
import { afterEach, expect, it } from "vitest";
import { closeAll, edsName, serviceChain, startClient, startRelay, startUpstream, watch } from "./support/harness.js";

afterEach(closeAll);

it("serves clients through two levels of relays, one upstream stream per level", async () => {
  const upstream = await startUpstream();
  upstream.setResources([
    ...serviceChain("echo", 5001).slice(2),
    { resource: buildCluster({ name: "v", edsServiceName: "prod" }), constraints: "env=prod" },
    { resource: buildCluster({ name: "v", edsServiceName: "test" }), constraints: "env=test" },
  ]);
  const relay1 = await startRelay(upstream.address, { upstreamApi: "DELTA_GRPC", nodeId: "relay-1" });
  const relay2 = await startRelay(relay1.address, { upstreamApi: "GRPC", nodeId: "relay-2" });
  const clients = [startClient(relay2.address, "a", "DELTA_GRPC"), startClient(relay2.address, "b", "GRPC")];
  const endpoints = clients.map((c) => watch(c, endpointResourceType, "echo-cluster"));
  const variants = clients.map((c, i) => watch(c, clusterResourceType, "v", { env: i === 0 ? "prod" : "test" }));
  for (const rec of endpoints) expect((await rec.nextResource()).clusterName).toBe("echo-cluster");
  expect(edsName(await variants[0]!.nextResource())).toBe("prod");
  expect(edsName(await variants[1]!.nextResource())).toBe("test");

  // One stream per level, each holding one subscription per (name, map).
  expect(upstream.streams().map((s) => s.node?.id)).toEqual(["relay-1"]);
  expect(relay1.streams().map((s) => s.node?.id)).toEqual(["relay-2"]);
  expect(relay2.streams()).toHaveLength(2);
  for (const level of [upstream, relay1]) {
    const cds = level.streams()[0]!.types.find((t) => t.typeUrl === CDS_TYPE_URL)!;
    expect(cds.resourceLocators.map((l) => l.dynamicParameters.env).sort()).toEqual(["prod", "test"]);
    expect(level.streams()[0]!.types.find((t) => t.typeUrl === EDS_TYPE_URL)!.resourceNames).toEqual(["echo-cluster"]);
  }

  upstream.setResource(
    buildClusterLoadAssignment({
      clusterName: "echo-cluster",
      localities: [{ zone: "a", endpoints: ["127.0.0.1:5002"] }],
    }),
  );
  for (const rec of endpoints) {
    const update = await rec.nextResource();
    expect(update.priorities[0]?.localities[0]?.endpoints[0]?.addresses[0]?.port).toBe(5002);
  }
  upstream.removeResource(CDS_TYPE_URL, "v", "env=test");
  const removed = await variants[1]!.next();
  expect(removed.kind === "ambient" && removed.error.kind).toBe("does_not_exist");
  expect(variants[0]!.pending()).toEqual([]);
});

it("keeps a client of a more specific variant on it when an overlapping variant changes, through two levels", async () => {
  // Steps: (1) upstream variants env=prod and env=prod && version=v2 (overlapping); behind relay 2 (delta to relay 1,
  // so it is sent only what changed) one client per parameter map; (2) the env=prod variant changes: its client gets
  // it, and relay 2 sends the v2 client nothing. Relay 1 must send relay 2 the v2 variant beside the changed one,
  // since relay 2's client picks among what one response carries (docs/decisions.md#relay-cache).
  const upstream = await startUpstream();
  upstream.setResources([
    { resource: buildCluster({ name: "v", edsServiceName: "prod" }), constraints: "env=prod" },
    {
      resource: buildCluster({ name: "v", edsServiceName: "prod-v2" }),
      constraints: "env=prod && version=v2",
      allowOverlap: true,
    },
  ]);
  const relay1 = await startRelay(upstream.address, { upstreamApi: "DELTA_GRPC", nodeId: "relay-1" });
  const relay2 = await startRelay(relay1.address, { upstreamApi: "DELTA_GRPC", nodeId: "relay-2" });
  const prod = watch(startClient(relay2.address, "p", "DELTA_GRPC"), clusterResourceType, "v", { env: "prod" });
  const v2 = watch(startClient(relay2.address, "p-v2", "DELTA_GRPC"), clusterResourceType, "v", {
    env: "prod",
    version: "v2",
  });
  expect(edsName(await prod.nextResource())).toBe("prod");
  expect(edsName(await v2.nextResource())).toBe("prod-v2");

  // 2. Relay 2 answers both maps from one response of relay 1: by the time the env=prod client has its update,
  // whatever relay 2 was going to send the v2 client is sent.
  const mark = relay2.hooks.mark();
  upstream.setResource(buildCluster({ name: "v", edsServiceName: "prod-2" }), { constraints: "env=prod" });
  expect(edsName(await prod.nextResource())).toBe("prod-2");
  expect(relay2.hooks.responses().filter((r) => r.seq > mark && r.node?.id === "p-v2")).toEqual([]);
  expect(v2.pending()).toEqual([]);
});
