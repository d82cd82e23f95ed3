// The upstream goes away and comes back; the relay goes away and another takes its place. Over real HTTP/2.
import { buildCluster, CDS_TYPE_URL, type DeltaResponseEvent, EDS_TYPE_URL } from "@xdskit/control-plane";
import { clusterResourceType, createXdsClient, endpointResourceType, StatusCode } from "@xdskit/xds-client";
import { afterEach, describe, expect, it } from "vitest";
import {
  bootstrapFor,
  closeAll,
  edsName,
  serviceChain,
  startClient,
  startRelay,
  startUpstream,
  watch,
} from "./support/harness.js";

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
  }, 60_000); // two restarts over HTTP/2: 6 s in npm test with the machine busy

  it("leaves what the upstream answered (does not exist, an error) as it was, with no fallback over it", async () => {
    // Steps: (1) a client holds v's env=prod variant, is told `missing` does not exist, and gets the upstream's
    // PERMISSION_DENIED for v{env: prod, zone: b} (whose parameters the cached env=prod variant also matches); (2) the
    // upstream stops; a new name, asked next on the same stream, gets UNAVAILABLE (the relay has seen the outage);
    // nothing was sent about the three answered subscriptions: an outage does not replace the upstream's answers with
    // a fallback or UNAVAILABLE (docs/decisions.md#relay-outage).
    const upstream = await startUpstream();
    upstream.setResource(buildCluster({ name: "v", edsServiceName: "prod" }), { constraints: "env=prod" });
    upstream.setResourceError(
      CDS_TYPE_URL,
      "v",
      { code: StatusCode.PERMISSION_DENIED, message: "not for zone b" },
      { constraints: "env=prod && zone=b", allowOverlap: true },
    );
    const relay = await startRelay(upstream.address, { upstreamApi: "DELTA_GRPC" });
    const client = startClient(relay.address, "a", "DELTA_GRPC");

    // 1.
    const prod = watch(client, clusterResourceType, "v", { env: "prod" });
    expect(edsName(await prod.nextResource())).toBe("prod");
    const missing = watch(client, clusterResourceType, "missing");
    const zoned = watch(client, clusterResourceType, "v", { env: "prod", zone: "b" });
    const [gone, denied] = await Promise.all([missing.next(), zoned.next()]);
    expect(gone.kind === "error" && gone.error.kind).toBe("does_not_exist");
    expect(denied.kind === "error" && denied.error.code).toBe(StatusCode.PERMISSION_DENIED);

    // 2.
    const mark = relay.hooks.mark();
    await upstream.stop();
    const unknown = await watch(client, clusterResourceType, "never-cached").next();
    expect(unknown.kind === "error" && unknown.error.code).toBe(StatusCode.UNAVAILABLE);
    const told = relay.hooks
      .responses()
      .filter((r) => r.seq > mark)
      .flatMap((r) => [...r.resourceNames, ...r.errorNames, ...(r.kind === "delta" ? r.removedNames : [])]);
    expect(told).toEqual(["never-cached"]);
    for (const rec of [prod, missing, zoned]) expect(rec.pending()).toEqual([]);
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

describe("relay restart", () => {
  it("sends a state-of-the-world client's full-state type only once every subscription in it is answered again", async () => {
    // Steps: (1) a SotW client holds clusters `b` (from upstream 1) and `a` (an xdstp name of authority `slow`, from
    // upstream 2) through a relay that keeps nothing unused; (2) upstream 2 holds its responses back; the relay
    // restarts: its cache goes with its streams, the client reconnects and subscribes to both again; upstream 1
    // answers `b` at once; (3) upstream 2 lets go: the relay's first CDS response to the client lists both. A
    // response with `b` alone would have told the client `a` was deleted (docs/decisions.md#relay-serving).
    const [first, slow] = [await startUpstream(), await startUpstream()];
    const a = "xdstp://slow/envoy.config.cluster.v3.Cluster/a";
    first.setResource(buildCluster({ name: "b" }));
    slow.setResource(
      buildCluster({ name: a, edsServiceName: "xdstp://slow/envoy.config.endpoint.v3.ClusterLoadAssignment/a" }),
    );
    const relay = await startRelay(first.address, {
      upstream: {
        bootstrap: {
          ...bootstrapFor(first.address, "relay"),
          authorities: { slow: { xds_servers: bootstrapFor(slow.address, "relay").xds_servers } },
        },
        env: {},
      },
    });
    const client = createXdsClient({
      bootstrap: { ...bootstrapFor(relay.address, "c", "GRPC"), authorities: { slow: {} } },
      env: {},
    });
    try {
      // 1.
      const [watchA, watchB] = [watch(client, clusterResourceType, a), watch(client, clusterResourceType, "b")];
      await Promise.all([watchA.nextResource(), watchB.nextResource()]);

      // 2.
      slow.hooks.hold();
      const [relayMark, firstMark] = [relay.hooks.mark(), first.hooks.mark()];
      await relay.restart();
      await first.hooks.waitForRequest(
        (r) =>
          r.kind === "sotw" && r.typeUrl === CDS_TYPE_URL && r.disposition === "ack" && r.resourceNames.includes("b"),
        { after: firstMark, timeoutMs: 10_000 },
      );

      // 3.
      slow.hooks.release();
      await relay.hooks.waitForRequest((r) => r.typeUrl === CDS_TYPE_URL && r.disposition === "ack", {
        after: relayMark,
        timeoutMs: 10_000,
      });
      const sent = relay.hooks.responses().filter((r) => r.seq > relayMark && r.typeUrl === CDS_TYPE_URL);
      expect(sent.map((r) => [...r.resourceNames].sort())).toEqual([["b", a]]);
      // The client heard of its own connection failing during the restart, and of nothing else (no deletion).
      for (const rec of [watchA, watchB]) {
        const heard = rec
          .pending()
          .filter((e) => e.kind !== "cleared" && !(e.kind === "ambient" && e.error.kind === "connection"));
        expect(heard).toEqual([]);
      }
    } finally {
      await client.close();
    }
  });
});
