// Resources that depend on who asks, through the relay (docs/decisions.md#relay-per-node-resources), over real
// HTTP/2: DPDS fetched for each node on an upstream stream that carries that node (an @xdskit/dpds-wrapper client
// behind the relay gets its own parameters, a second node its own); a name of a shared type the upstream marks
// do_not_cache moves to per-node fetching; the per-node streams are bounded, with a clear error past the limit, and
// close when no subscription needs them.
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { buildCluster, CDS_TYPE_URL, DPDS_TYPE_URL } from "@xdskit/control-plane";
import { type DynamicParametersUpdate, dpdsResourceType, withDynamicParameters } from "@xdskit/dpds-wrapper";
import { ClientStatusDiscoveryService } from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import { clusterResourceType, createXdsClient, StatusCode, type XdsClient } from "@xdskit/xds-client";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ApiType,
  bootstrapFor,
  closeAll,
  edsName,
  startClient,
  startRelay,
  startUpstream,
  until,
  watch,
} from "./support/harness.js";

afterEach(closeAll);

const CLUSTER = "envoy.config.cluster.v3.Cluster";
const openClients: XdsClient[] = [];
afterEach(async () => {
  await Promise.all(openClients.splice(0).map((c) => c.close()));
});

/** A DPDS client of the relay: @xdskit/dpds-wrapper over @xdskit/xds-client. */
function dpdsClient(address: string, nodeId: string, apiType: ApiType): XdsClient {
  const client = withDynamicParameters(createXdsClient({ bootstrap: bootstrapFor(address, nodeId, apiType), env: {} }));
  openClients.push(client);
  return client;
}

const nodesOf = (upstream: Awaited<ReturnType<typeof startUpstream>>) =>
  upstream
    .streams()
    .map((s) => s.node?.id ?? "")
    .sort();

describe.each(["GRPC", "DELTA_GRPC"] as ApiType[])("downstream %s", (downstreamApi) => {
  it("gives each DPDS client its own parameters, fetched on an upstream stream of its node, never another's", async () => {
    // Steps: (1) nodes a and b, DPDS clients behind the relay, get their own variants of a cluster; (2) upstream,
    // the relay's stream holds the cluster's two maps, and one stream per node holds that node's DPDS resource;
    // (3) a's parameters change: a moves, b hears nothing; (4) a goes: a's upstream stream closes.
    const upstream = await startUpstream();
    upstream.setResources([
      { resource: buildCluster({ name: "backend", edsServiceName: "stable" }), constraints: "env=stable" },
      { resource: buildCluster({ name: "backend", edsServiceName: "canary" }), constraints: "env=canary" },
    ]);
    upstream.setDynamicParameters("node-a", { [CLUSTER]: "env=canary" });
    upstream.setDynamicParameters("node-b", { [CLUSTER]: "env=stable" });
    const relay = await startRelay(upstream.address, { upstreamApi: "DELTA_GRPC" });

    // 1.
    const a = watch(dpdsClient(relay.address, "node-a", downstreamApi), clusterResourceType, "backend");
    const b = watch(dpdsClient(relay.address, "node-b", downstreamApi), clusterResourceType, "backend");
    expect(edsName(await a.nextResource())).toBe("canary");
    expect(edsName(await b.nextResource())).toBe("stable");

    // 2.
    expect(nodesOf(upstream)).toEqual(["node-a", "node-b", "relay"]);
    for (const node of ["node-a", "node-b"]) {
      const types = upstream.streams().find((s) => s.node?.id === node)?.types ?? [];
      expect(types.map((t) => [t.typeUrl, t.resourceNames])).toEqual([[DPDS_TYPE_URL, ["dynamic-parameters"]]]);
    }
    const shared = upstream.streams().find((s) => s.node?.id === "relay")?.types ?? [];
    expect(
      shared.flatMap((t) => t.resourceLocators.map((l) => `${l.name}{env=${l.dynamicParameters.env}}`)).sort(),
    ).toEqual(["backend{env=canary}", "backend{env=stable}"]);
    expect(
      relay
        .upstreamStreams()
        .map((s) => [s.nodeId, s.shared])
        .sort(),
    ).toEqual([
      ["node-a", false],
      ["node-b", false],
      ["relay", true],
    ]);
    expect(relay.stats().nodeUpstreams).toBe(2);
    // The relay's CSDS reports its own client and each node's.
    const csds = createClient(ClientStatusDiscoveryService, createGrpcTransport({ baseUrl: relay.url }));
    const scopes = (await csds.fetchClientStatus({})).config.map((c) => c.clientScope).sort();
    expect(scopes).toEqual(["#relay", "#relay node node-a", "#relay node node-b"]);

    // 3.
    upstream.setDynamicParameters("node-a", { [CLUSTER]: "env=stable" });
    expect(edsName(await a.nextResource())).toBe("stable");
    expect(b.pending()).toEqual([]);

    // 4.
    await openClients.shift()?.close();
    await until(upstream.hooks, () => !nodesOf(upstream).includes("node-a"));
    expect(relay.stats().nodeUpstreams).toBe(1);
  });
});

it("moves a name of a shared type that the upstream marks do_not_cache to per-node fetching", async () => {
  // Each node's scope upstream has its own "per-node" cluster, marked do_not_cache; the relay's own node gets a
  // third. Each client gets its node's, never the relay's nor the other node's.
  const upstream = await startUpstream();
  upstream.setResource(buildCluster({ name: "per-node", edsServiceName: "relay's" }), { doNotCache: true });
  upstream.setResource(buildCluster({ name: "shared" }));
  upstream
    .forNode("n1")
    .setResources([
      { resource: buildCluster({ name: "per-node", edsServiceName: "one" }), doNotCache: true },
      buildCluster({ name: "shared" }),
    ]);
  upstream
    .forNode("n2")
    .setResources([
      { resource: buildCluster({ name: "per-node", edsServiceName: "two" }), doNotCache: true },
      buildCluster({ name: "shared" }),
    ]);
  const relay = await startRelay(upstream.address);
  const one = watch(startClient(relay.address, "n1"), clusterResourceType, "per-node");
  expect(edsName(await one.nextResource(10_000))).toBe("one");
  const two = watch(startClient(relay.address, "n2", "DELTA_GRPC"), clusterResourceType, "per-node");
  expect(edsName(await two.nextResource())).toBe("two");
  const sharedOne = watch(startClient(relay.address, "n1"), clusterResourceType, "shared");
  await sharedOne.nextResource();
  // What the relay's own node got is served to nobody; the shared cluster stays on the relay's stream.
  const sent = relay.hooks.responses().filter((r) => r.typeUrl === CDS_TYPE_URL);
  expect(JSON.stringify(sent.map((r) => r.response))).not.toContain("relay's");
  const perNodeStreams = relay.upstreamStreams().filter((s) => !s.shared);
  expect(perNodeStreams.map((s) => [s.nodeId, s.types.map((t) => [t.typeUrl, t.names])]).sort()).toEqual([
    ["n1", [[CDS_TYPE_URL, 1]]],
    ["n2", [[CDS_TYPE_URL, 1]]],
  ]);
  expect(one.pending()).toEqual([]);
});

it("opens at most maxNodeUpstreams per-node streams: a further node is told RESOURCE_EXHAUSTED, and served once one closes", async () => {
  const upstream = await startUpstream();
  for (const node of ["n0", "n1", "n2", "n3"]) upstream.setDynamicParameters(node, { [CLUSTER]: `node=${node}` });
  const relay = await startRelay(upstream.address, { maxNodeUpstreams: 2 });
  const dpds = (node: string) => {
    const client = createXdsClient({ bootstrap: bootstrapFor(relay.address, node), env: {} });
    openClients.push(client);
    return { client, seen: watch<DynamicParametersUpdate>(client, dpdsResourceType, "dynamic-parameters") };
  };
  const first = [dpds("n0"), dpds("n1")];
  for (const { seen } of first) await seen.nextResource();
  const refused = dpds("n2").seen;
  const event = await refused.next();
  expect(event.kind === "error" && event.error.code).toBe(StatusCode.RESOURCE_EXHAUSTED);
  expect(event.kind === "error" && event.error.message).toContain("maxNodeUpstreams");
  // Bounded: the relay's own stream (nothing shared is subscribed here) and two per-node ones.
  expect(nodesOf(upstream).filter((n) => n !== "relay")).toEqual(["n0", "n1"]);

  // n0 leaves: a node that comes next is served.
  await first[0]?.client.close();
  await until(upstream.hooks, () => !nodesOf(upstream).includes("n0"));
  const later = dpds("n3").seen;
  const update = await later.nextResource();
  expect([...update.parametersByType.entries()]).toEqual([[CLUSTER, { node: "n3" }]]);
});
