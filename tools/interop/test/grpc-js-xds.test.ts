// grpc-js-xds 1.14 (an xDS client nobody here wrote) against @xdskit/control-plane over 127.0.0.1.
// Steps, one test each, in order (they share one channel):
//  1. The channel resolves xds:///echo.test: LDS -> RDS -> CDS -> EDS, each ACKed; a call reaches backend A.
//  2. A cluster grpc-js-xds cannot accept: it NACKs (its error detail shows in our request hook), the server does
//     not resend it, and calls keep going to backend A on the old cluster.
//  3. New endpoints: traffic moves to backend B.
//  4. The cluster is removed: calls fail with UNAVAILABLE; it comes back: calls work again. (grpc-js-xds keeps a
//     deleted resource cached and drops a re-added copy equal to it, so the cluster comes back changed: it now
//     names its endpoints `echo-endpoints-v2`.)
//  5. A TP3 resource error on the cluster: grpc-js-xds does not know resource_errors (its protos predate it), ACKs
//     the response, and sees the cluster gone from the full CDS state, as TP3 intends for older clients.
//  6. The control plane restarts on the same port: the client opens a new stream, re-subscribes with the versions
//     it holds, and calls keep working.
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import * as grpcJsXds from "@grpc/grpc-js-xds";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  CDS_TYPE_URL,
  createManagementServer,
  EDS_TYPE_URL,
  LDS_TYPE_URL,
  type ManagementServer,
  RDS_TYPE_URL,
  type SotwRequestEvent,
} from "@xdskit/control-plane";
import { Cluster_DiscoveryType, ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { bootstrapJson, XDS_BOOTSTRAP_OPTION } from "../src/bootstrap.js";
import { callEcho, callUntil, type EchoBackend, startEchoBackend } from "../src/echo-backend.js";

const NODE_ID = "xdskit-interop";
const STATUS_UNAVAILABLE = 14;

function endpointsFor(backend: EchoBackend, name = "echo-cluster") {
  return buildClusterLoadAssignment({
    clusterName: name,
    localities: [{ region: "local", zone: "a", endpoints: [{ address: "127.0.0.1", port: backend.port }] }],
  });
}

describe("grpc-js-xds against the control plane", () => {
  let controlPlane: ManagementServer;
  let backendA: EchoBackend;
  let backendB: EchoBackend;
  let client: grpc.Client;

  beforeAll(async () => {
    grpcJsXds.register();
    [controlPlane, backendA, backendB] = await Promise.all([
      createManagementServer({ controlPlaneId: "xdskit-interop" }),
      startEchoBackend("A"),
      startEchoBackend("B"),
    ]);
    controlPlane.setSnapshot([
      buildListener({ name: "echo.test", routeConfigName: "echo-route" }),
      buildRouteConfiguration({ name: "echo-route", cluster: "echo-cluster" }),
      buildCluster({ name: "echo-cluster" }),
      endpointsFor(backendA),
    ]);
    client = new grpc.Client("xds:///echo.test", grpc.credentials.createInsecure(), {
      [XDS_BOOTSTRAP_OPTION]: bootstrapJson(controlPlane.address, NODE_ID),
    });
  });

  afterAll(async () => {
    client?.close();
    await Promise.all([controlPlane?.close(), backendA?.close(), backendB?.close()]);
  });

  const acked = (typeUrl: string, after = 0) =>
    controlPlane.hooks.waitForRequest((r) => r.typeUrl === typeUrl && r.disposition === "ack", { after });

  test("resolves LDS -> RDS -> CDS -> EDS, ACKs each, and routes a call to the backend", async () => {
    const result = await callUntil(client, (r) => r.ok);
    expect(result).toEqual({ ok: true, reply: "A:ping" });

    const firstOfType = (typeUrl: string) =>
      controlPlane.hooks.requests().find((r) => r.typeUrl === typeUrl && r.disposition === "subscribe");
    const order = [LDS_TYPE_URL, RDS_TYPE_URL, CDS_TYPE_URL, EDS_TYPE_URL].map((t) => firstOfType(t)?.seq ?? -1);
    expect(order.every((seq) => seq > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);

    const lds = firstOfType(LDS_TYPE_URL) as SotwRequestEvent;
    expect(lds.request.node?.id).toBe(NODE_ID);
    expect(lds.request.node?.userAgentName).toBe("gRPC Node Pure JS");
    expect(lds.resourceNames).toEqual(["echo.test"]);
    expect((firstOfType(RDS_TYPE_URL) as SotwRequestEvent).resourceNames).toEqual(["echo-route"]);
    expect((firstOfType(CDS_TYPE_URL) as SotwRequestEvent).resourceNames).toEqual(["echo-cluster"]);
    expect((firstOfType(EDS_TYPE_URL) as SotwRequestEvent).resourceNames).toEqual(["echo-cluster"]);

    for (const typeUrl of [LDS_TYPE_URL, RDS_TYPE_URL, CDS_TYPE_URL, EDS_TYPE_URL]) {
      const ack = (await acked(typeUrl)) as SotwRequestEvent;
      expect(ack.versionInfo).toBe(controlPlane.typeVersion(typeUrl));
      expect(ack.node?.id).toBe(NODE_ID);
    }
    expect(backendA.calls).toBeGreaterThan(0);
  });

  test("NACKs a cluster it cannot accept; the error shows in the hooks; the old cluster keeps serving", async () => {
    const mark = controlPlane.hooks.mark();
    const goodVersion = controlPlane.typeVersion(CDS_TYPE_URL);
    // An EDS cluster without eds_cluster_config: grpc-js-xds rejects it.
    const badVersion = controlPlane.setResource(
      create(ClusterSchema, {
        name: "echo-cluster",
        clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.EDS },
      }),
    );
    const nack = (await controlPlane.hooks.waitForRequest(
      (r) => r.typeUrl === CDS_TYPE_URL && r.disposition === "nack",
      {
        after: mark,
      },
    )) as SotwRequestEvent;
    expect(nack.errorDetail?.message).toContain("eds_cluster_config is unset");
    expect(nack.errorDetail?.message).toContain("resource index 0");
    // It keeps ACKing the last version it accepted.
    expect(nack.versionInfo).toBe(goodVersion);
    expect(nack.versionInfo).not.toBe(badVersion);
    const stream = controlPlane.streams()[0];
    expect(stream?.types.find((t) => t.typeUrl === CDS_TYPE_URL)?.nack?.message).toBe(nack.errorDetail?.message);

    // Nothing is resent in answer to the NACK, and calls still reach backend A.
    const afterNack = controlPlane.hooks.mark();
    expect(await callEcho(client, "still")).toEqual({ ok: true, reply: "A:still" });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(controlPlane.hooks.responses().filter((r) => r.seq > afterNack && r.typeUrl === CDS_TYPE_URL)).toEqual([]);

    const fixMark = controlPlane.hooks.mark();
    controlPlane.setResource(buildCluster({ name: "echo-cluster" }));
    await acked(CDS_TYPE_URL, fixMark);
  });

  test("new endpoints move the traffic to backend B", async () => {
    const mark = controlPlane.hooks.mark();
    controlPlane.setResource(endpointsFor(backendB));
    await acked(EDS_TYPE_URL, mark);
    const result = await callUntil(client, (r) => r.reply === "B:ping");
    expect(result).toEqual({ ok: true, reply: "B:ping" });
  });

  test("a removed cluster fails calls with UNAVAILABLE; adding it back restores them", async () => {
    const mark = controlPlane.hooks.mark();
    controlPlane.removeResource(CDS_TYPE_URL, "echo-cluster");
    const response = await controlPlane.hooks.waitForResponse((r) => r.typeUrl === CDS_TYPE_URL, { after: mark });
    expect(response.resourceNames).toEqual([]);
    await acked(CDS_TYPE_URL, mark);

    const failed = await callUntil(client, (r) => !r.ok);
    expect(failed.ok).toBe(false);
    expect(failed.code).toBe(STATUS_UNAVAILABLE);
    expect(failed.details).toBe("Cluster resource echo-cluster does not exist");

    const backMark = controlPlane.hooks.mark();
    controlPlane.setResources([
      buildCluster({ name: "echo-cluster", edsServiceName: "echo-endpoints-v2" }),
      endpointsFor(backendB, "echo-endpoints-v2"),
    ]);
    expect(await callUntil(client, (r) => r.ok)).toEqual({ ok: true, reply: "B:ping" });
    const eds = (await controlPlane.hooks.waitForRequest((r) => r.typeUrl === EDS_TYPE_URL, {
      after: backMark,
    })) as SotwRequestEvent;
    expect(eds.resourceNames).toEqual(["echo-endpoints-v2"]);
  });

  test("a TP3 resource error is ACKed by this older client and reads as the cluster being gone", async () => {
    const mark = controlPlane.hooks.mark();
    controlPlane.setResourceError(CDS_TYPE_URL, "echo-cluster", { code: 7, message: "not for you" });
    const response = await controlPlane.hooks.waitForResponse((r) => r.typeUrl === CDS_TYPE_URL, { after: mark });
    expect(response.errorNames).toEqual(["echo-cluster"]);
    expect(response.resourceNames).toEqual([]);
    const reply = (await controlPlane.hooks.waitForRequest((r) => r.typeUrl === CDS_TYPE_URL && r.seq > response.seq, {
      after: mark,
    })) as SotwRequestEvent;
    expect(reply.disposition).toBe("ack");
    expect(reply.versionInfo).toBe(response.versionInfo);

    const failed = await callUntil(client, (r) => !r.ok);
    expect(failed.code).toBe(STATUS_UNAVAILABLE);

    // Back, and different from the copy it still holds (see step 4).
    controlPlane.setResource(buildCluster({ name: "echo-cluster" }));
    expect(await callUntil(client, (r) => r.ok)).toEqual({ ok: true, reply: "B:ping" });
  });

  test("after a control plane restart on the same port it re-subscribes with its versions and keeps working", async () => {
    const port = controlPlane.port;
    const mark = controlPlane.hooks.mark();
    const versions = new Map(
      [LDS_TYPE_URL, RDS_TYPE_URL, CDS_TYPE_URL, EDS_TYPE_URL].map((t) => [t, controlPlane.typeVersion(t)]),
    );
    await controlPlane.restart();
    expect(controlPlane.port).toBe(port);

    const opened = await controlPlane.hooks.waitForStreamOpen(undefined, { after: mark, timeoutMs: 10_000 });
    for (const [typeUrl, version] of versions) {
      const request = (await controlPlane.hooks.waitForRequest(
        (r) => r.streamId === opened.streamId && r.typeUrl === typeUrl && r.disposition === "subscribe",
        { after: mark, timeoutMs: 10_000 },
      )) as SotwRequestEvent;
      expect(request.versionInfo).toBe(version);
      expect(request.node?.id).toBe(NODE_ID);
    }
    expect(await callEcho(client, "again")).toEqual({ ok: true, reply: "B:again" });
  });
});
