// The relay between an upstream control plane and xds-client clients, over real HTTP/2, in every combination of
// protocols (downstream x upstream). Steps, in one test per combination:
//  1. Two clients (nodes a, b) follow LDS -> RDS -> CDS -> EDS through the relay and get the upstream's chain.
//  2. Upstream, the relay is one stream holding one subscription per name, whatever the number of clients.
//  3. New endpoints upstream reach both clients as one EDS update each, and nothing else.
//  4. The cluster is removed upstream: both clients hear it (A88: an ambient does-not-exist, cache kept).
//  5. Client a closes: the upstream subscriptions stay for b; b closes: the relay unsubscribes upstream.
import {
  buildClusterLoadAssignment,
  CDS_TYPE_URL,
  EDS_TYPE_URL,
  LDS_TYPE_URL,
  RDS_TYPE_URL,
} from "@xdskit/control-plane";
import {
  clusterResourceType,
  endpointResourceType,
  listenerResourceType,
  routeConfigurationResourceType,
  type XdsClient,
} from "@xdskit/xds-client";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ApiType,
  closeAll,
  type Recorder,
  serviceChain,
  startClient,
  startRelay,
  startUpstream,
  until,
  watch,
} from "./support/harness.js";

afterEach(closeAll);

interface Chain {
  readonly endpoints: Recorder<import("@xdskit/xds-client").EndpointUpdate>;
  readonly cluster: Recorder<import("@xdskit/xds-client").ClusterUpdate>;
  readonly ports: number[];
}

/** Follows the chain of `service` as a gRPC channel would; resolves with the recorders and the endpoint ports. */
async function follow(client: XdsClient, service: string): Promise<Chain> {
  const listener = await watch(client, listenerResourceType, service).nextResource();
  if (listener.kind !== "client" || listener.route.type !== "rds") throw new Error("expected a client Listener on RDS");
  const routes = await watch(client, routeConfigurationResourceType, listener.route.routeConfigName).nextResource();
  const action = routes.virtualHosts[0]?.routes[0]?.action;
  if (action?.type !== "cluster") throw new Error("expected a cluster route");
  const cluster = watch(client, clusterResourceType, action.cluster);
  const clusterUpdate = await cluster.nextResource();
  if (clusterUpdate.type !== "eds") throw new Error("expected an EDS cluster");
  const endpoints = watch(client, endpointResourceType, clusterUpdate.edsServiceName || clusterUpdate.name);
  const update = await endpoints.nextResource();
  const ports = update.priorities.flatMap((p) =>
    p.localities.flatMap((l) => l.endpoints.map((e) => e.addresses[0]?.port ?? 0)),
  );
  return { endpoints, cluster, ports };
}

const combinations: [ApiType, ApiType][] = [
  ["GRPC", "GRPC"],
  ["DELTA_GRPC", "DELTA_GRPC"],
  ["GRPC", "DELTA_GRPC"],
  ["DELTA_GRPC", "GRPC"],
];

describe.each(combinations)("downstream %s, upstream %s", (downstreamApi, upstreamApi) => {
  it("serves the chain to every client through one upstream subscription per name, updates and removals included", async () => {
    const upstream = await startUpstream();
    upstream.setSnapshot(serviceChain("echo", 5001));
    const relay = await startRelay(upstream.address, { upstreamApi });

    // 1.
    const a = startClient(relay.address, "a", downstreamApi);
    const b = startClient(relay.address, "b", downstreamApi);
    const [chainA, chainB] = await Promise.all([follow(a, "echo"), follow(b, "echo")]);
    expect(chainA.ports).toEqual([5001]);
    expect(chainB.ports).toEqual([5001]);

    // 2.
    const upstreamStreams = upstream.streams();
    expect(upstreamStreams).toHaveLength(1);
    expect(upstreamStreams[0]?.node?.id).toBe("relay");
    const names = Object.fromEntries(upstreamStreams[0]!.types.map((t) => [t.typeUrl, t.resourceNames]));
    expect(names).toEqual({
      [LDS_TYPE_URL]: ["echo"],
      [RDS_TYPE_URL]: ["echo-route"],
      [CDS_TYPE_URL]: ["echo-cluster"],
      [EDS_TYPE_URL]: ["echo-cluster"],
    });
    expect(relay.stats()).toMatchObject({ upstreamSubscriptions: 4, names: 4, cachedEntries: 4, streams: 2 });

    // 3.
    upstream.setResource(
      buildClusterLoadAssignment({
        clusterName: "echo-cluster",
        localities: [{ zone: "a", endpoints: ["127.0.0.1:5002"] }],
      }),
    );
    for (const chain of [chainA, chainB]) {
      const update = await chain.endpoints.nextResource();
      expect(update.priorities[0]?.localities[0]?.endpoints[0]?.addresses[0]?.port).toBe(5002);
    }

    // 4.
    upstream.removeResource(CDS_TYPE_URL, "echo-cluster");
    for (const chain of [chainA, chainB]) {
      const event = await chain.cluster.next();
      expect(event.kind === "ambient" && event.error.kind).toBe("does_not_exist");
    }
    // Nothing else reached the clients: one EDS update and the removal, each once.
    expect(chainA.endpoints.pending()).toEqual([]);
    expect(chainA.cluster.pending()).toEqual([]);

    // 5.
    await a.close();
    await until(relay.hooks, () => relay.stats().streams === 1);
    expect(relay.stats().upstreamSubscriptions).toBe(4);
    await b.close();
    await until(relay.hooks, () => relay.stats().streams === 0);
    expect(relay.stats()).toMatchObject({ upstreamSubscriptions: 0, names: 0, cachedEntries: 0 });
    await until(upstream.hooks, () =>
      (upstream.streams()[0]?.types ?? []).every(
        (t) => t.resourceNames.length === 0 && t.resourceLocators.length === 0,
      ),
    );
  });
});

describe("retainUnusedMs", () => {
  it("keeps an unused upstream subscription for a retention past Node's timer limit (30 days)", async () => {
    // Node alone fires a timer of more than 2^31-1 ms after 1 ms: the subscription would go at once.
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const upstream = await startUpstream();
      upstream.setSnapshot(serviceChain("kept", 5001));
      const relay = await startRelay(upstream.address, { retainUnusedMs: 30 * 24 * 3_600_000 });
      const client = startClient(relay.address, "a");
      await watch(client, listenerResourceType, "kept").nextResource();
      expect(relay.stats().upstreamSubscriptions).toBe(1);
      await client.close();
      await until(relay.hooks, () => relay.stats().streams === 0);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(relay.stats().upstreamSubscriptions).toBe(1);
      expect(warnings.filter((warning) => warning.name === "TimeoutOverflowWarning")).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
