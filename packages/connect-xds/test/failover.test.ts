// Connections and failover over real HTTP/2: a backend that does not speak HTTP/2, a port that refuses connections,
// EDS priorities, endpoint health and EDS updates. Waits are driven by calls, never by sleeping.
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as net from "node:net";
import { create } from "@bufbuild/protobuf";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  type LocalityInit,
  type ManagementServer,
} from "@xdskit/control-plane";
import { Endpoint_AdditionalAddressSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_components_pb";
import type { ClusterLoadAssignment } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient, served, untilServedBy } from "./support/echo-client.js";
import { clientFor, startControlPlane } from "./support/harness.js";

/** A port on 127.0.0.1 nothing listens on (bound, then released). */
async function refusedAddress(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `127.0.0.1:${port}`;
}

describe("connections and failover", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let a: Backend;
  let b: Backend;
  let http1: http.Server;
  let http1Address: string;
  const transports: XdsTransport[] = [];
  let next = 0;

  /** A fresh listener/route/cluster/EDS set named after the test, and a transport for it. */
  function setUp(localities: readonly LocalityInit[], edit?: (assignment: ClusterLoadAssignment) => void) {
    const name = `svc${next++}`;
    const assignment = buildClusterLoadAssignment({ clusterName: `${name}-cluster`, localities });
    edit?.(assignment);
    const resources = [
      buildListener({ name, routeConfigName: `${name}-route` }),
      buildRouteConfiguration({ name: `${name}-route`, cluster: `${name}-cluster` }),
      buildCluster({ name: `${name}-cluster` }),
      assignment,
    ];
    for (const resource of resources) server.setResource(resource);
    const transport = createXdsTransport({ target: `xds:///${name}`, client });
    transports.push(transport);
    const update = (next: readonly LocalityInit[]) =>
      server.setResource(buildClusterLoadAssignment({ clusterName: `${name}-cluster`, localities: next }));
    return { echo: echoClient(transport), update };
  }

  beforeAll(async () => {
    server = await startControlPlane();
    client = clientFor(server);
    [a, b] = await Promise.all([startBackend("a"), startBackend("b")]);
    // An HTTP/1.1 server: the HTTP/2 preface gets a 400 and a closed socket.
    http1 = http.createServer((_req, res) => res.end("not grpc"));
    await new Promise<void>((resolve) => http1.listen(0, "127.0.0.1", resolve));
    http1Address = `127.0.0.1:${(http1.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
  });

  afterAll(async () => {
    await client.close();
    await Promise.all([a.close(), b.close(), server.close()]);
    await new Promise<void>((resolve) => http1.close(() => resolve()));
  });

  it("survives an endpoint that is not an HTTP/2 server and sends every call to the healthy one", async () => {
    const { echo } = setUp([{ zone: "z", endpoints: [http1Address, a.address] }]);
    for (let i = 0; i < 10; i++) expect(await served(echo)).toBe("a");
  });

  it("uses priority 1 while priority 0 refuses connections, and returns to priority 0 when it is back", async () => {
    const down = await refusedAddress();
    const { echo, update } = setUp([
      { zone: "p0", priority: 0, endpoints: [down] },
      { zone: "p1", priority: 1, endpoints: [b.address] },
    ]);
    for (let i = 0; i < 5; i++) expect(await served(echo)).toBe("b");
    update([
      { zone: "p0", priority: 0, endpoints: [a.address] },
      { zone: "p1", priority: 1, endpoints: [b.address] },
    ]);
    await untilServedBy(echo, "a");
    for (let i = 0; i < 5; i++) expect(await served(echo)).toBe("a");
  });

  it("skips endpoints whose health is neither HEALTHY nor UNKNOWN", async () => {
    const { echo } = setUp([
      {
        zone: "z",
        endpoints: [
          { address: "127.0.0.1", port: a.port, health: "unhealthy" },
          { address: "127.0.0.1", port: b.port, health: "healthy" },
        ],
      },
    ]);
    for (let i = 0; i < 6; i++) expect(await served(echo)).toBe("b");
  });

  it("moves calls to the endpoints of a new EDS response", async () => {
    const { echo, update } = setUp([{ zone: "z", endpoints: [a.address] }]);
    expect(await served(echo)).toBe("a");
    update([{ zone: "z", endpoints: [b.address] }]);
    await untilServedBy(echo, "b");
    for (let i = 0; i < 5; i++) expect(await served(echo)).toBe("b");
  });

  it("tries an endpoint's additional addresses when its first refuses connections, as one endpoint (A61)", async () => {
    const down = await refusedAddress();
    // One endpoint: a refused address, then a's and b's as its additional addresses.
    const { echo } = setUp([{ zone: "z", endpoints: [down] }], (assignment) => {
      const host = assignment.endpoints[0]?.lbEndpoints[0]?.hostIdentifier;
      if (host?.case !== "endpoint") throw new Error("endpoint expected");
      host.value.additionalAddresses = [a.port, b.port].map((port) =>
        create(Endpoint_AdditionalAddressSchema, {
          address: {
            address: {
              case: "socketAddress",
              value: { address: "127.0.0.1", portSpecifier: { case: "portValue", value: port } },
            },
          },
        }),
      );
    });
    // One endpoint, one connection: every call goes to the address that connected first (a, unless a slow connect
    // let b's attempt win after the 250 ms delay), never to both as if they were endpoints of their own.
    const names: string[] = [];
    for (let i = 0; i < 6; i++) names.push(await served(echo));
    expect(new Set(names).size).toBe(1);
  });

  it("fails calls UNAVAILABLE when no endpoint can be reached", async () => {
    const { echo } = setUp([{ zone: "z", endpoints: [await refusedAddress()] }]);
    await expect(served(echo)).rejects.toMatchObject({ code: 14 });
  });
});
