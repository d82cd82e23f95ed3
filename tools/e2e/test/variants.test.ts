// TP2 variants end to end: @xdskit/control-plane serves one cluster name in several variants; @xdskit/xds-client
// watches it with different dynamic parameters over real HTTP/2 on 127.0.0.1, in SotW and in delta.
import { buildCluster, CDS_TYPE_URL, createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import { clusterResourceType, StatusCode, type XdsClient } from "@xdskit/xds-client";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { type ApiType, clientFor, clusterRecorder, csds } from "./support.js";

let server: ManagementServer;
let client: XdsClient | undefined;

beforeEach(async () => {
  server = await createManagementServer();
});

afterEach(async () => {
  await client?.close();
  client = undefined;
  await server.close();
});

const variant = (marker: string, constraints: string) => ({
  resource: buildCluster({ name: "c", edsServiceName: marker }),
  constraints,
});

describe.each(["GRPC", "DELTA_GRPC"] as ApiType[])("variants to @xdskit/xds-client over %s", (apiType) => {
  test("each watch gets its variant; one variant is updated, removed and added back while the others stay", async () => {
    // Steps: variants !exists(env) (the default), env=prod and env=test of cluster c; watches of c without
    // parameters, with {env:prod} and with {env:test} -> each its variant, CSDS one row per subscription; the test
    // variant changes -> only its watcher hears; it is removed -> its watcher is told it does not exist (ambient:
    // A88 keeps the cached copy) while the others hear nothing; it is added back -> its watcher has it again.
    server.setResources([variant("default", "!exists(env)"), variant("p1", "env=prod"), variant("t1", "env=test")]);
    client = clientFor(server, apiType);
    const plain = clusterRecorder();
    const prod = clusterRecorder();
    const test = clusterRecorder();
    client.watch(clusterResourceType, "c", plain);
    client.watch(clusterResourceType, "c", prod, { dynamicParameters: { env: "prod" } });
    client.watch(clusterResourceType, "c", test, { dynamicParameters: { env: "test" } });
    expect(await plain.take(1)).toEqual(["resource:default"]);
    expect(await prod.take(1)).toEqual(["resource:p1"]);
    expect(await test.take(1)).toEqual(["resource:t1"]);
    expect(csds(client).sort()).toEqual(["c ACKED", "c{env=prod} ACKED", "c{env=test} ACKED"]);

    const mark = server.hooks.mark();
    server.setResource(buildCluster({ name: "c", edsServiceName: "t2" }), { constraints: "env=test" });
    expect(await test.take(1)).toEqual(["resource:t2"]);
    // The ACK of that response is in: nothing else is coming for the other watchers.
    await server.hooks.waitForRequest((r) => r.typeUrl === CDS_TYPE_URL && r.disposition === "ack", { after: mark });
    expect([...plain.events, ...prod.events]).toEqual([]);

    server.removeResource(CDS_TYPE_URL, "c", "env=test");
    expect(await test.take(1)).toEqual([`ambient:${StatusCode.NOT_FOUND}`]);
    expect(csds(client).sort()).toEqual(["c ACKED", "c{env=prod} ACKED", "c{env=test} DOES_NOT_EXIST"]);

    server.setResource(buildCluster({ name: "c", edsServiceName: "t3" }), { constraints: "env=test" });
    expect(await test.take(1)).toEqual(["resource:t3"]);
    expect([...plain.events, ...prod.events]).toEqual([]);
    expect(csds(client).sort()).toEqual(["c ACKED", "c{env=prod} ACKED", "c{env=test} ACKED"]);
  });

  test("a TP3 error on one variant reaches the watchers of that variant only, until the variant is set again", async () => {
    server.setResources([variant("p1", "env=prod"), variant("t1", "env=test")]);
    client = clientFor(server, apiType);
    const prod = clusterRecorder();
    const test = clusterRecorder();
    client.watch(clusterResourceType, "c", prod, { dynamicParameters: { env: "prod" } });
    client.watch(clusterResourceType, "c", test, { dynamicParameters: { env: "test" } });
    expect(await prod.take(1)).toEqual(["resource:p1"]);
    expect(await test.take(1)).toEqual(["resource:t1"]);

    server.setResourceError(
      CDS_TYPE_URL,
      "c",
      { code: StatusCode.UNAVAILABLE, message: "down" },
      { constraints: "env=test" },
    );
    expect(await test.take(1)).toEqual([`ambient:${StatusCode.UNAVAILABLE}`]);
    expect(csds(client).sort()).toEqual(["c{env=prod} ACKED", "c{env=test} RECEIVED_ERROR"]);

    server.setResource(buildCluster({ name: "c", edsServiceName: "t2" }), { constraints: "env=test" });
    expect(await test.take(1)).toEqual(["resource:t2"]);
    expect(prod.events).toEqual([]);
    expect(csds(client).sort()).toEqual(["c{env=prod} ACKED", "c{env=test} ACKED"]);
  });

  test("a variant replaced by two more specific ones: the watcher moves to its new variant in one update", async () => {
    server.setResource(buildCluster({ name: "c", edsServiceName: "p" }), { constraints: "env=prod" });
    client = clientFor(server, apiType);
    const v1 = clusterRecorder();
    client.watch(clusterResourceType, "c", v1, { dynamicParameters: { env: "prod", version: "v1" } });
    expect(await v1.take(1)).toEqual(["resource:p"]);

    server.removeResource(CDS_TYPE_URL, "c", "env=prod");
    server.setResources([variant("p-v1", "env=prod && version=v1"), variant("p-v2", "env=prod && version=v2")]);
    expect(await v1.take(1)).toEqual(["resource:p-v1"]);
    // No does-not-exist between the two: the deletion and the new variant came in one response.
    await new Promise((r) => setTimeout(r, 100));
    expect(v1.events).toEqual([]);
  });

  // Two variants of specificity 0 that both match an empty map, the unconstrained one and `!exists(env)`, tie; the
  // tie goes by canonical text, in which no constraints read "true", so `!exists(env)` ("!" sorts before "t") wins
  // for the plain watch on both sides, while {env:x} only matches the unconstrained one. It shows when one response
  // carries both (a client once ranked the unconstrained variant by an empty key and picked it).
  test("a tie between the unconstrained variant and a constrained one goes by the canonical text `true`", async () => {
    const permissive = await createManagementServer({ allowOverlappingVariants: true });
    const c = clientFor(permissive, apiType);
    try {
      permissive.setResources([
        { resource: buildCluster({ name: "c", edsServiceName: "plain" }) },
        variant("default", "!exists(env)"),
      ]);
      const none = clusterRecorder();
      const other = clusterRecorder();
      c.watch(clusterResourceType, "c", other, { dynamicParameters: { env: "x" } });
      c.watch(clusterResourceType, "c", none);
      expect(await other.take(1)).toEqual(["resource:plain"]);
      expect(await none.take(1)).toEqual(["resource:default"]);
    } finally {
      await c.close();
      await permissive.close();
    }
  });
});
