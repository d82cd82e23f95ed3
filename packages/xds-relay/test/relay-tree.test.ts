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
