// The upstream goes away and comes back; the relay goes away and another takes its place. Over real HTTP/2.
import { buildCluster, CDS_TYPE_URL, type DeltaResponseEvent, EDS_TYPE_URL } from "@xdskit/control-plane";
import { clusterResourceType, endpointResourceType, StatusCode } from "@xdskit/xds-client";
import { afterEach, describe, expect, it } from "vitest";
import { closeAll, edsName, serviceChain, startClient, startRelay, startUpstream, watch } from "./support/harness.js";

afterEach(closeAll);

describe("upstream outage", () => {
  it("keeps serving from cache, falls back to a matching cached variant for a new map, and resyncs with nothing spurious", async () => {
    // Steps: (1) clients hold a cluster, endpoints and the env=prod variant of v; (2) the upstream stops: the
    // clients hear nothing; a new client is served the cached resources at once; (3) a new parameter map
    // {env: prod, zone: a} cannot be asked upstream: it falls back to the cached env=prod variant, which it
    // matches; a name nothing cached is UNAVAILABLE; (4) the upstream comes back with the same resources: once the
    // relay has resubscribed and ACKed everything, no client got anything new.
    const upstream = await startUpstream();
    upstream.setResources([
      ...serviceChain("echo", 5001).slice(2),
      { resource: buildCluster({ name: "v", edsServiceName: "prod" }), constraints: "env=prod" },
      { resource: buildCluster({ name: "v", edsServiceName: "test" }), constraints: "env=test" },
    ]);
    const relay = await startRelay(upstream.address, { upstreamApi: "DELTA_GRPC" });

    // 1.
    const a = startClient(relay.address, "a", "DELTA_GRPC");
    const cluster = watch(a, clusterResourceType, "echo-cluster");
    const endpoints = watch(a, endpointResourceType, "echo-cluster");
    const prod = watch(a, clusterResourceType, "v", { env: "prod" });
    await Promise.all([cluster.nextResource(), endpoints.nextResource(), prod.nextResource()]);

    // 2.
    await upstream.stop();
    const b = startClient(relay.address, "b", "GRPC");
    expect((await watch(b, clusterResourceType, "echo-cluster").nextResource()).name).toBe("echo-cluster");
    expect((await watch(b, endpointResourceType, "echo-cluster").nextResource()).clusterName).toBe("echo-cluster");

    // 3.
    const zoned = watch(b, clusterResourceType, "v", { env: "prod", zone: "a" });
    expect(edsName(await zoned.nextResource())).toBe("prod");
    const unknown = await watch(b, clusterResourceType, "never-cached").next();
    expect(unknown.kind === "error" && unknown.error.code).toBe(StatusCode.UNAVAILABLE);
    for (const rec of [cluster, endpoints, prod]) expect(rec.pending()).toEqual([]);

    // 4. The relay's client reconnects with the versions it holds: the upstream resends only the variant (delta
    // initial versions name resources, not variants), identical to what the relay has; EDS not at all.
    const relayMark = relay.hooks.mark();
    const upstreamMark = upstream.hooks.mark();
    await upstream.start();
    await upstream.hooks.waitForRequest((r) => r.typeUrl === EDS_TYPE_URL, { after: upstreamMark, timeoutMs: 10_000 });
    await upstream.hooks.waitForRequest((r) => r.typeUrl === CDS_TYPE_URL && r.disposition === "ack", {
      after: upstreamMark,
      timeoutMs: 10_000,
    });
    const toA = relay.hooks.responses().filter((r) => r.seq > relayMark && r.node?.id === "a");
    expect(toA).toEqual([]);
    for (const rec of [cluster, endpoints, prod, zoned]) expect(rec.pending()).toEqual([]);
  });
});

describe("another relay", () => {
  it("sends a delta client that reconnects to a new relay nothing that did not change (versions from content)", async () => {
    // Steps: (1) the upstream (content versions on) serves a cluster and its endpoints; a delta client holds them
    // through relay 1, whose versions are the upstream's; (2) relay 1 goes; relay 2 starts on its port with an empty
    // cache; (3) the client reconnects with initial_resource_versions: relay 2 asks the upstream, finds the versions
    // the client holds, and sends nothing; (4) a real change still reaches the client through relay 2.
    const upstream = await startUpstream({ contentVersions: true });
    const [, , clusterMessage, endpointsMessage] = serviceChain("echo", 5001);
    const upstreamVersions = [upstream.setResource(clusterMessage!), upstream.setResource(endpointsMessage!)];
    const relay1 = await startRelay(upstream.address);
    const client = startClient(relay1.address, "a", "DELTA_GRPC");
    const cluster = watch(client, clusterResourceType, "echo-cluster");
    const endpoints = watch(client, endpointResourceType, "echo-cluster");
    await Promise.all([cluster.nextResource(), endpoints.nextResource()]);
    const sentVersions = (relay1.hooks.responses() as DeltaResponseEvent[]).flatMap((e) =>
      e.response.resources.map((r) => r.version),
    );
    expect(sentVersions.sort()).toEqual([...upstreamVersions].sort());

    // 2.
    const port = relay1.port;
    await relay1.close();
    const upstreamMark = upstream.hooks.mark();
    const relay2 = await startRelay(upstream.address, { port });

    // 3.
    const subscribed = await relay2.hooks.waitForRequest((r) => r.typeUrl === EDS_TYPE_URL, { timeoutMs: 10_000 });
    expect(subscribed.kind === "delta" && subscribed.request.initialResourceVersions).toEqual({
      "echo-cluster": upstreamVersions[1],
    });
    for (const typeUrl of [CDS_TYPE_URL, EDS_TYPE_URL]) {
      await upstream.hooks.waitForRequest((r) => r.typeUrl === typeUrl && r.disposition === "ack", {
        after: upstreamMark,
        timeoutMs: 10_000,
      });
    }
    expect(relay2.hooks.responses().filter((r) => r.resourceNames.length > 0 || r.errorNames.length > 0)).toEqual([]);
    for (const rec of [cluster, endpoints]) expect(rec.pending().filter((e) => e.kind === "resource")).toEqual([]);

    // 4.
    upstream.setResource(buildCluster({ name: "echo-cluster", edsServiceName: "moved" }));
    let event = await cluster.next();
    while (event.kind !== "resource") event = await cluster.next();
    expect(edsName(event.resource)).toBe("moved");
  });
});
