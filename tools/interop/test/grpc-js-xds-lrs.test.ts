// @grpc/grpc-js-xds (an xDS client nobody here wrote) sends its load reports to @xdskit/control-plane's LRS sink:
//  1. The control plane serves echo-lrs.test -> a cluster with `lrs_server: self` and two localities (zones a and
//     b, one backend each), and asks for a report every 250 ms.
//  2. grpc-js-xds opens StreamLoadStats to the same server, with its node and envoy.lrs.supports_send_all_clusters.
//  3. Calls spread over both localities; the sink's reports, added up per locality, match the calls each backend
//     answered (successes plus calls the client abandoned), and the latest loads read back per locality.
import * as grpc from "@grpc/grpc-js";
import * as grpcJsXds from "@grpc/grpc-js-xds";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  createManagementServer,
  type ManagementServer,
} from "@xdskit/control-plane";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { bootstrapJson, XDS_BOOTSTRAP_OPTION } from "../src/bootstrap.js";
import { callEcho, callUntil } from "../src/echo-backend.js";
import { type OrcaBackend, startOrcaBackend } from "../src/orca-backend.js";

const NODE_ID = "xdskit-interop-lrs";

describe("grpc-js-xds load reports into the control plane's LRS sink", () => {
  let controlPlane: ManagementServer;
  let zoneA: OrcaBackend;
  let zoneB: OrcaBackend;
  let client: grpc.Client;

  beforeAll(async () => {
    grpcJsXds.register();
    [controlPlane, zoneA, zoneB] = await Promise.all([
      createManagementServer({ lrsPolicy: { intervalMs: 250 } }),
      startOrcaBackend("A"),
      startOrcaBackend("B"),
    ]);
    controlPlane.setSnapshot([
      buildListener({ name: "echo-lrs.test", routeConfigName: "echo-lrs-route" }),
      buildRouteConfiguration({ name: "echo-lrs-route", cluster: "echo-lrs" }),
      buildCluster({ name: "echo-lrs", edsServiceName: "echo-lrs-eds", lrsServerSelf: true }),
      buildClusterLoadAssignment({
        clusterName: "echo-lrs-eds",
        localities: [
          { region: "local", zone: "a", endpoints: [{ address: "127.0.0.1", port: zoneA.port }] },
          { region: "local", zone: "b", endpoints: [{ address: "127.0.0.1", port: zoneB.port }] },
        ],
      }),
    ]);
    client = new grpc.Client("xds:///echo-lrs.test", grpc.credentials.createInsecure(), {
      [XDS_BOOTSTRAP_OPTION]: bootstrapJson(controlPlane.address, NODE_ID),
    });
  });

  afterAll(async () => {
    client?.close();
    await Promise.all([controlPlane?.close(), zoneA?.close(), zoneB?.close()]);
  });

  test("reports reach the sink, counted per locality", async () => {
    expect((await callUntil(client, (r) => r.ok)).ok).toBe(true);
    for (let i = 0; i < 40 && (zoneA.calls === 0 || zoneB.calls === 0); i++) {
      expect((await callEcho(client, `call ${i}`)).ok).toBe(true);
    }
    expect(zoneA.calls).toBeGreaterThan(0);
    expect(zoneB.calls).toBeGreaterThan(0);

    // Every call a backend answered is counted once, as a success or, when the client gave up on it first (a
    // deadline passed on a loaded machine), as an error.
    const finished = (zone: string) =>
      controlPlane.lrs
        .reports()
        .filter((r) => r.nodeId === NODE_ID)
        .flatMap((r) => r.clusterStats)
        .filter((c) => c.clusterName === "echo-lrs")
        .flatMap((c) => c.upstreamLocalityStats)
        .filter((l) => l.locality?.zone === zone)
        .reduce((n, l) => n + Number(l.totalSuccessfulRequests) + Number(l.totalErrorRequests), 0);
    const deadline = Date.now() + 10_000;
    while ((finished("a") < zoneA.calls || finished("b") < zoneB.calls) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect({ a: finished("a"), b: finished("b") }).toEqual({ a: zoneA.calls, b: zoneB.calls });

    const report = controlPlane.lrs.reports().find((r) => r.nodeId === NODE_ID);
    expect(report?.node?.clientFeatures).toContain("envoy.lrs.supports_send_all_clusters");
    expect(report?.node?.userAgentName).toBe("gRPC Node Pure JS");
    const withStats = controlPlane.lrs.reports().find((r) => r.nodeId === NODE_ID && r.clusterStats.length > 0);
    expect(withStats?.clusterStats[0]?.clusterServiceName).toBe("echo-lrs-eds");

    const loads = controlPlane.lrs.latestLoads({ nodeId: NODE_ID, clusterName: "echo-lrs" });
    expect(loads.length).toBe(1);
    expect(controlPlane.lrs.streams().find((s) => s.nodeId === NODE_ID)?.policy).toEqual({
      clusters: "all",
      intervalMs: 250,
    });
  });
});
