// Wildcard subscriptions through the relay (docs/decisions.md#relay-wildcards), over real HTTP/2: one upstream
// wildcard per (type, parameter map) serves every downstream wildcard subscriber, in every protocol combination;
// Envoy-style raw clients (SotW's empty first request, `*` beside names, delta `*` subscribed and unsubscribed);
// wildcards with parameters; a SotW subscriber waiting for an upstream that has not answered, and one whose upstream
// goes away and comes back.
import { buildCluster, buildListener, CDS_TYPE_URL, LDS_TYPE_URL } from "@xdskit/control-plane";
import { ClientResourceStatus } from "@xdskit/protos/envoy/admin/v3/config_dump_shared_pb";
import { type ClusterUpdate, clusterResourceType, createXdsClient } from "@xdskit/xds-client";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ApiType,
  bootstrapFor,
  closeAll,
  sortedHead,
  startClient,
  startRelay,
  startUpstream,
  until,
  wildcardRecorder,
} from "./support/harness.js";
import { deltaChanges, rawDelta, rawSotw, sotwNames } from "./support/raw-ads.js";

afterEach(closeAll);

const edsOf = (update: ClusterUpdate) => (update.type === "eds" ? update.edsServiceName : "");

/** What the upstream's one stream subscribes to of CDS: wildcard parameter maps and names. */
function upstreamCds(upstream: Awaited<ReturnType<typeof startUpstream>>) {
  const streams = upstream.streams();
  const type = streams[0]?.types.find((t) => t.typeUrl === CDS_TYPE_URL);
  return { streams: streams.length, wildcards: type?.wildcardParameters ?? [], names: type?.resourceNames ?? [] };
}

const combinations: [ApiType, ApiType][] = [
  ["GRPC", "GRPC"],
  ["DELTA_GRPC", "DELTA_GRPC"],
  ["GRPC", "DELTA_GRPC"],
  ["DELTA_GRPC", "GRPC"],
];

describe.each(combinations)("downstream %s, upstream %s", (downstreamApi, upstreamApi) => {
  it("serves every wildcard subscriber from one upstream wildcard; each add and removal reaches each once", async () => {
    const upstream = await startUpstream();
    upstream.setResources([buildCluster({ name: "a" }), buildCluster({ name: "b" })]);
    const relay = await startRelay(upstream.address, { upstreamApi });
    const recorders = [wildcardRecorder<ClusterUpdate>(edsOf), wildcardRecorder<ClusterUpdate>(edsOf)];
    recorders.forEach((rec, i) => {
      startClient(relay.address, `client-${i}`, downstreamApi).watchAll(clusterResourceType, rec);
    });
    for (const rec of recorders)
      expect(sortedHead(await rec.take(3), 2)).toEqual(["resource a", "resource b", "answered"]);
    // Upstream: the relay's one stream holds `*` alone, whatever the number of subscribers.
    expect(upstreamCds(upstream)).toEqual({ streams: 1, wildcards: [{}], names: [] });
    expect(relay.upstreamStreams()).toEqual([
      { nodeId: "relay", shared: true, types: [{ typeUrl: CDS_TYPE_URL, names: 0, wildcards: [{}] }] },
    ]);
    // The relay's CSDS shows its wildcard and what it covers.
    const rows = relay.client
      .dumpResources()
      .genericXdsConfigs.map((c) => `${c.name} ${ClientResourceStatus[c.clientStatus]}`);
    expect(rows.sort()).toEqual(["* ACKED", "a ACKED", "b ACKED"]);

    upstream.setResource(buildCluster({ name: "c" }));
    for (const rec of recorders) expect(await rec.take(1)).toEqual(["resource c"]);
    upstream.setResource(buildCluster({ name: "a", edsServiceName: "a2" }));
    for (const rec of recorders) expect(await rec.take(1)).toEqual(["resource a a2"]);
    upstream.removeResource(CDS_TYPE_URL, "b");
    for (const rec of recorders) {
      expect(await rec.take(1)).toEqual(["error b does_not_exist"]);
      expect(rec.pending()).toEqual([]);
    }

    await closeAll();
    expect(relay.stats().upstreamSubscriptions).toBe(0);
  });
});

describe("Envoy-style clients", () => {
  it("SotW: an empty first request is a wildcard; `*` beside a name; naming a name alone leaves the wildcard", async () => {
    const upstream = await startUpstream();
    upstream.setResources([
      buildCluster({ name: "a" }),
      buildCluster({ name: "b" }),
      buildListener({ name: "l", routeConfigName: "r" }),
    ]);
    const relay = await startRelay(upstream.address);
    const envoy = rawSotw(relay.url);
    await envoy.send({ node: { id: "envoy" }, typeUrl: CDS_TYPE_URL });
    const first = await envoy.next();
    expect(sotwNames(first)).toEqual(["a", "b"]);
    await envoy.send({ typeUrl: CDS_TYPE_URL, versionInfo: first.versionInfo, responseNonce: first.nonce });
    await envoy.send({ typeUrl: LDS_TYPE_URL });
    const listeners = await envoy.next();
    expect(listeners.typeUrl).toBe(LDS_TYPE_URL);
    expect(sotwNames(listeners)).toEqual(["l"]);
    await envoy.send({ typeUrl: LDS_TYPE_URL, versionInfo: listeners.versionInfo, responseNonce: listeners.nonce });

    upstream.setResource(buildCluster({ name: "c" }));
    const added = await envoy.next();
    expect(sotwNames(added)).toEqual(["a", "b", "c"]);
    // `*` and a name the upstream does not have: the relay asks for the name too; the full state is unchanged.
    await envoy.send({
      typeUrl: CDS_TYPE_URL,
      resourceNames: ["*", "x"],
      versionInfo: added.versionInfo,
      responseNonce: added.nonce,
    });
    await until(upstream.hooks, () => upstreamCds(upstream).names.includes("x"));
    expect(upstreamCds(upstream)).toEqual({ streams: 1, wildcards: [{}], names: ["x"] });
    // Naming a alone: the wildcard is left, and so is the upstream wildcard.
    await envoy.send({
      typeUrl: CDS_TYPE_URL,
      resourceNames: ["a"],
      versionInfo: added.versionInfo,
      responseNonce: added.nonce,
    });
    // (The client holds a already: nothing is due until something changes.)
    await until(
      upstream.hooks,
      () => JSON.stringify(upstreamCds(upstream)) === JSON.stringify({ streams: 1, wildcards: [], names: ["a"] }),
    );
    upstream.setResources([buildCluster({ name: "a", edsServiceName: "a2" }), buildCluster({ name: "d" })]);
    const named = await envoy.next();
    expect(sotwNames(named)).toEqual(["a"]);
    envoy.close();
  });

  it("delta: `*` beside a name; `*` unsubscribed, only the name stays", async () => {
    const upstream = await startUpstream();
    upstream.setResources([buildCluster({ name: "a" }), buildCluster({ name: "b" })]);
    const relay = await startRelay(upstream.address, { upstreamApi: "DELTA_GRPC" });
    const envoy = rawDelta(relay.url);
    await envoy.send({ node: { id: "envoy" }, typeUrl: CDS_TYPE_URL, resourceNamesSubscribe: ["*", "a"] });
    const first = await envoy.next();
    expect(deltaChanges(first)).toEqual(["+a", "+b"]);
    await envoy.send({ typeUrl: CDS_TYPE_URL, responseNonce: first.nonce });
    upstream.setResource(buildCluster({ name: "c" }));
    const added = await envoy.next();
    expect(deltaChanges(added)).toEqual(["+c"]);
    await envoy.send({ typeUrl: CDS_TYPE_URL, responseNonce: added.nonce, resourceNamesUnsubscribe: ["*"] });
    await until(upstream.hooks, () => upstreamCds(upstream).wildcards.length === 0);
    // b is no longer subscribed: its removal is not this client's business; a's is.
    upstream.removeResource(CDS_TYPE_URL, "b");
    upstream.removeResource(CDS_TYPE_URL, "a");
    const removed = await envoy.next();
    expect(deltaChanges(removed)).toEqual(["-a"]);
    envoy.close();
  });
});

it("a wildcard per parameter map: each subscriber gets the variants its parameters match, one upstream stream", async () => {
  const upstream = await startUpstream();
  upstream.setResources([
    { resource: buildCluster({ name: "v", edsServiceName: "prod" }), constraints: "env=prod" },
    { resource: buildCluster({ name: "v", edsServiceName: "test" }), constraints: "env=test" },
    buildCluster({ name: "p" }),
  ]);
  const relay = await startRelay(upstream.address);
  // An Envoy-style delta client with a `*` locator, and our client with bootstrap parameters.
  const envoy = rawDelta(relay.url);
  await envoy.send({
    node: { id: "envoy" },
    typeUrl: CDS_TYPE_URL,
    resourceLocatorsSubscribe: [{ name: "*", dynamicParameters: { env: "prod" } }],
  });
  const prod = await envoy.next();
  expect(deltaChanges(prod)).toEqual(["+p", "+v"]);
  expect(
    prod.resources.find((r) => r.resourceName?.name === "v")?.resourceName?.dynamicParameterConstraints,
  ).toBeDefined();
  const client = createXdsClient({
    bootstrap: { ...bootstrapFor(relay.address, "test-client"), dynamic_parameters: { env: "test" } },
    env: {},
  });
  const rec = wildcardRecorder<ClusterUpdate>(edsOf);
  client.watchAll(clusterResourceType, rec);
  expect(sortedHead(await rec.take(3), 2)).toEqual(["resource p", "resource v test", "answered"]);
  expect(upstreamCds(upstream).streams).toBe(1);
  expect(upstreamCds(upstream).wildcards).toEqual([{ env: "prod" }, { env: "test" }]);

  upstream.setResource(buildCluster({ name: "v", edsServiceName: "test2" }), { constraints: "env=test" });
  expect(await rec.take(1)).toEqual(["resource v test2"]);
  await envoy.none();
  await client.close();
  envoy.close();
});

describe("the upstream and waiting wildcard subscribers", () => {
  it("a SotW wildcard subscriber is sent nothing until the upstream answers; an upstream lost later leaves it as it is", async () => {
    // Steps: (1) the upstream is down when the subscriber comes: nothing is sent (an empty list would delete what
    // a reconnecting client holds); (2) the upstream starts: the subscriber gets the full state once; (3) the
    // upstream goes away: nothing is sent, and a second subscriber is served from the relay's cache; (4) the
    // upstream comes back with a change: each subscriber gets it, once.
    const upstream = await startUpstream();
    upstream.setResources([buildCluster({ name: "a" }), buildCluster({ name: "b" })]);
    await upstream.stop();
    const relay = await startRelay(upstream.address);
    const first = rawSotw(relay.url);
    await first.send({ node: { id: "first" }, typeUrl: CDS_TYPE_URL, resourceNames: ["*"] });
    await first.none(300);

    await upstream.start();
    const state = await first.next(10_000);
    expect(sotwNames(state)).toEqual(["a", "b"]);
    await first.send({
      typeUrl: CDS_TYPE_URL,
      resourceNames: ["*"],
      versionInfo: state.versionInfo,
      responseNonce: state.nonce,
    });

    await upstream.stop();
    await until(relay.hooks, () => relay.upstreamState === "unreachable", 10_000).catch(() => {});
    const second = rawSotw(relay.url);
    await second.send({ node: { id: "second" }, typeUrl: CDS_TYPE_URL, resourceNames: ["*"] });
    const cached = await second.next();
    expect(sotwNames(cached)).toEqual(["a", "b"]);
    await second.send({
      typeUrl: CDS_TYPE_URL,
      resourceNames: ["*"],
      versionInfo: cached.versionInfo,
      responseNonce: cached.nonce,
    });
    await first.none();

    upstream.setResource(buildCluster({ name: "c" }));
    await upstream.start();
    for (const stream of [first, second]) {
      const update = await stream.next(10_000);
      expect(sotwNames(update)).toEqual(["a", "b", "c"]);
      await stream.send({
        typeUrl: CDS_TYPE_URL,
        resourceNames: ["*"],
        versionInfo: update.versionInfo,
        responseNonce: update.nonce,
      });
    }
    await first.none();
    await second.none();
    first.close();
    second.close();
  });
});
