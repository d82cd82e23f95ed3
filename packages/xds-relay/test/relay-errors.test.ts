// Errors through the relay, over real HTTP/2: TP3 resource errors (per name and per variant) reach the downstream
// subscriptions they concern and clear when the resource comes back; with `doNotCache: "refuse"`, a do_not_cache
// resource is refused with FAILED_PRECONDITION and its bytes never cached; a name the upstream does not have is
// does-not-exist downstream; a wildcard of a type whose SotW responses do not list every resource is refused with
// UNIMPLEMENTED.
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { buildCluster, CDS_TYPE_URL, EDS_TYPE_URL } from "@xdskit/control-plane";
import { AggregatedDiscoveryService } from "@xdskit/protos/envoy/service/discovery/v3/ads_pb";
import { DiscoveryRequestSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { clusterResourceType, StatusCode } from "@xdskit/xds-client";
import { afterEach, describe, expect, it } from "vitest";
import { type ApiType, closeAll, startClient, startRelay, startUpstream, watch } from "./support/harness.js";

afterEach(closeAll);

describe.each(["GRPC", "DELTA_GRPC"] as ApiType[])("downstream %s", (downstreamApi) => {
  it("passes TP3 errors to the subscriptions they concern, once, and clears them when the resource is back", async () => {
    // Steps: (1) cluster c and variants of v cached by clients; (2) a TP3 error on c: the client keeps c and is told
    // (ambient, the server's code); a new client gets the error as its result; (3) the error on v's env=prod variant
    // reaches the env=prod client only; (4) c set again, unchanged: the error is over (cleared), nothing else.
    const upstream = await startUpstream();
    upstream.setResources([
      buildCluster({ name: "c" }),
      { resource: buildCluster({ name: "v", edsServiceName: "prod" }), constraints: "env=prod" },
      { resource: buildCluster({ name: "v", edsServiceName: "test" }), constraints: "env=test" },
    ]);
    const relay = await startRelay(upstream.address, { upstreamApi: "DELTA_GRPC" });
    const client = startClient(relay.address, "a", downstreamApi);
    const c = watch(client, clusterResourceType, "c");
    const prod = watch(client, clusterResourceType, "v", { env: "prod" });
    const test = watch(client, clusterResourceType, "v", { env: "test" });
    await Promise.all([c.nextResource(), prod.nextResource(), test.nextResource()]);

    upstream.setResourceError(CDS_TYPE_URL, "c", { code: StatusCode.UNAVAILABLE, message: "draining" });
    const ambient = await c.next();
    expect(ambient.kind).toBe("ambient");
    if (ambient.kind !== "ambient") return;
    expect(ambient.error.code).toBe(StatusCode.UNAVAILABLE);
    expect(ambient.error.kind).toBe("server_error");
    expect(ambient.error.message).toContain("draining");
    const late = watch(startClient(relay.address, "late", downstreamApi), clusterResourceType, "c");
    const lateEvent = await late.next();
    expect(lateEvent.kind === "error" && [lateEvent.error.code, lateEvent.error.kind]).toEqual([
      StatusCode.UNAVAILABLE,
      "server_error",
    ]);

    upstream.setResourceError(
      CDS_TYPE_URL,
      "v",
      { code: StatusCode.PERMISSION_DENIED, message: "not yours" },
      { constraints: "env=prod" },
    );
    const denied = await prod.next();
    expect(denied.kind === "ambient" && denied.error.code).toBe(StatusCode.PERMISSION_DENIED);

    upstream.setResource(buildCluster({ name: "c" }));
    expect((await c.next()).kind).toBe("cleared");
    expect((await late.nextResource()).name).toBe("c");
    expect(c.pending()).toEqual([]);
    expect(test.pending()).toEqual([]);
  });
});

describe("refusals and absence", () => {
  it('with doNotCache "refuse": a do_not_cache resource is FAILED_PRECONDITION and none of its bytes is cached', async () => {
    const upstream = await startUpstream();
    upstream.setResource(buildCluster({ name: "per-node" }), { doNotCache: true });
    const relay = await startRelay(upstream.address, { upstreamApi: "DELTA_GRPC", doNotCache: "refuse" });
    const seen = watch(startClient(relay.address, "a", "DELTA_GRPC"), clusterResourceType, "per-node");
    const event = await seen.next();
    expect(event.kind === "error" && event.error.code).toBe(StatusCode.FAILED_PRECONDITION);
    expect(event.kind === "error" && event.error.message).toContain("do_not_cache");
    // What the relay holds for it is the refusal, not the resource.
    const sent = relay.hooks.responses().filter((r) => r.typeUrl === CDS_TYPE_URL);
    expect(sent.flatMap((r) => r.resourceNames)).toEqual([]);
    expect(sent.flatMap((r) => r.errorNames)).toEqual(["per-node"]);
  });

  it("tells a delta client at once that a name the upstream does not have does not exist", async () => {
    const upstream = await startUpstream();
    const relay = await startRelay(upstream.address, { upstreamApi: "DELTA_GRPC" });
    const seen = watch(startClient(relay.address, "a", "DELTA_GRPC"), clusterResourceType, "missing");
    const event = await seen.next();
    expect(event.kind === "error" && event.error.kind).toBe("does_not_exist");
    const removals = relay.hooks.responses().flatMap((r) => (r.kind === "delta" ? r.removedNames : []));
    expect(removals).toEqual(["missing"]);
  });

  it("ends a stream that subscribes by wildcard to a type that is not full-state (EDS) with UNIMPLEMENTED", async () => {
    const upstream = await startUpstream();
    const relay = await startRelay(upstream.address);
    const ads = createClient(AggregatedDiscoveryService, createGrpcTransport({ baseUrl: relay.url }));
    async function* requests() {
      yield create(DiscoveryRequestSchema, { typeUrl: EDS_TYPE_URL, resourceNames: ["*"], node: { id: "envoy" } });
      await new Promise(() => {});
    }
    const error = await (async () => {
      for await (const _ of ads.streamAggregatedResources(requests())) {
        // nothing is expected
      }
    })().then(
      () => undefined,
      (e: unknown) => e as { code: number; rawMessage: string },
    );
    expect(error?.code).toBe(StatusCode.UNIMPLEMENTED);
    expect(error?.rawMessage).toContain("wildcard");
    expect(relay.stats().upstreamSubscriptions).toBe(0);
  });
});
