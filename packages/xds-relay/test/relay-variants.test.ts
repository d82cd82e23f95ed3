// TP2 variants through the relay, over real HTTP/2, both downstream protocols. Steps:
//  1. Upstream serves cluster `svc` in variants env=prod, env=test and env=prod && version=v2 (overlapping the first).
//  2. Clients behind one relay: two with {env: prod}, one with {env: test}: each gets its variant; upstream, the
//     relay holds one subscription per parameter map (two), not per client.
//  3. A client with {env: prod, version: v2}: the cached env=prod variant matches its parameters, but a better one
//     may exist upstream, so the relay asks first: the client's only update is the env=prod && version=v2 variant.
//  4. The variants reach clients with their resource_name as the upstream wrote it.
//  5. An update to the env=test variant reaches the env=test client only.
import { toBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { buildCluster, CDS_TYPE_URL, type SotwResponseEvent } from "@xdskit/control-plane";
import {
  DynamicParameterConstraintsSchema,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { clusterResourceType } from "@xdskit/xds-client";
import { afterEach, describe, expect, it } from "vitest";
import { type ApiType, closeAll, edsName, startClient, startRelay, startUpstream, watch } from "./support/harness.js";

afterEach(closeAll);

describe.each([
  ["GRPC", "DELTA_GRPC"],
  ["DELTA_GRPC", "GRPC"],
] as [ApiType, ApiType][])("downstream %s, upstream %s", (downstreamApi, upstreamApi) => {
  it("gives each parameter map its variant through one upstream subscription per map, asking upstream before a cached match", async () => {
    // 1.
    const upstream = await startUpstream();
    upstream.setResources([
      { resource: buildCluster({ name: "svc", edsServiceName: "prod" }), constraints: "env=prod" },
      { resource: buildCluster({ name: "svc", edsServiceName: "test" }), constraints: "env=test" },
      {
        resource: buildCluster({ name: "svc", edsServiceName: "prod-v2" }),
        constraints: "env=prod && version=v2",
        allowOverlap: true,
      },
    ]);
    const relay = await startRelay(upstream.address, { upstreamApi });

    // 2.
    const clients = ["p1", "p2", "t1"].map((id) => startClient(relay.address, id, downstreamApi));
    const [p1, p2, t1] = clients.map((client, i) =>
      watch(client, clusterResourceType, "svc", { env: i < 2 ? "prod" : "test" }),
    );
    expect(edsName(await p1!.nextResource())).toBe("prod");
    expect(edsName(await p2!.nextResource())).toBe("prod");
    expect(edsName(await t1!.nextResource())).toBe("test");
    const locators = () =>
      (upstream.streams()[0]?.types.find((t) => t.typeUrl === CDS_TYPE_URL)?.resourceLocators ?? [])
        .map(
          (l) =>
            `${l.name}{${Object.entries(l.dynamicParameters)
              .map(([k, v]) => `${k}=${v}`)
              .join(",")}}`,
        )
        .sort();
    expect(upstream.streams()).toHaveLength(1);
    expect(locators()).toEqual(["svc{env=prod}", "svc{env=test}"]);

    // 3.
    const upstreamMark = upstream.hooks.mark();
    const v2Client = startClient(relay.address, "p-v2", downstreamApi);
    const v2 = watch(v2Client, clusterResourceType, "svc", { env: "prod", version: "v2" });
    expect(edsName(await v2.nextResource())).toBe("prod-v2");
    const toV2 = relay.hooks.responses().filter((r) => r.node?.id === "p-v2" && r.typeUrl === CDS_TYPE_URL);
    expect(toV2.map((r) => r.resourceNames)).toEqual([["svc{env=prod && version=v2}"]]);
    expect(locators()).toEqual(["svc{env=prod,version=v2}", "svc{env=prod}", "svc{env=test}"]);
    expect(upstream.hooks.requests().some((r) => r.seq > upstreamMark && r.typeUrl === CDS_TYPE_URL)).toBe(true);
    expect(relay.stats()).toMatchObject({ upstreamSubscriptions: 3, names: 1, cachedEntries: 3 });

    // 4. What the relay sent the v2 client carries the upstream's resource_name, constraints byte for byte.
    const sent = relay.hooks
      .responses()
      .filter((r) => r.typeUrl === CDS_TYPE_URL && r.resourceNames.length > 0)
      .at(-1);
    const wrapper =
      sent?.kind === "sotw"
        ? anyUnpack((sent as SotwResponseEvent).response.resources[0]!, ResourceSchema)
        : sent?.response.resources[0];
    expect(wrapper?.resourceName?.name).toBe("svc");
    const upstreamSent = upstream.hooks
      .responses()
      .filter((r) => r.typeUrl === CDS_TYPE_URL && r.resourceNames.some((n) => n.includes("v2")));
    expect(upstreamSent.length).toBeGreaterThan(0);
    const upstreamWrapper =
      upstreamSent[0]?.kind === "sotw"
        ? (upstreamSent[0] as SotwResponseEvent).response.resources
            .map((a) => anyUnpack(a, ResourceSchema))
            .find((r) => r?.resourceName?.dynamicParameterConstraints?.type.case === "andConstraints")
        : upstreamSent[0]?.response.resources.find(
            (r) => r.resourceName?.dynamicParameterConstraints?.type.case === "andConstraints",
          );
    expect(toBinary(DynamicParameterConstraintsSchema, wrapper!.resourceName!.dynamicParameterConstraints!)).toEqual(
      toBinary(DynamicParameterConstraintsSchema, upstreamWrapper!.resourceName!.dynamicParameterConstraints!),
    );

    // 5. By the time t1 has its update, the relay has planned every stream the change woke: only t1's got one.
    const relayMark = relay.hooks.mark();
    upstream.setResource(buildCluster({ name: "svc", edsServiceName: "test-2" }), { constraints: "env=test" });
    expect(edsName(await t1!.nextResource())).toBe("test-2");
    const after = relay.hooks.responses().filter((r) => r.seq > relayMark && r.typeUrl === CDS_TYPE_URL);
    expect(after.map((r) => r.node?.id)).toEqual(["t1"]);
    for (const other of [p1!, p2!, v2]) expect(other.pending()).toEqual([]);
  });
});
