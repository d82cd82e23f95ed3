// grpc-js-xds 1.14 (an xDS client nobody here wrote) through @xdskit/xds-relay, over 127.0.0.1: control plane ->
// relay -> two grpc-js-xds channels (two nodes). Steps:
//  1. Both channels resolve xds:///echo.test through the relay (LDS -> RDS -> CDS -> EDS, each ACKed to the relay)
//     and route real calls to backend A; upstream, the relay is one stream with one subscription per name.
//  2. The endpoints move to backend B upstream: traffic through the relay moves to B on both channels.
//  3. The relay restarts on its port (its cache is kept, the streams end): the channels reconnect and keep calling B.
import * as grpc from "@grpc/grpc-js";
import * as grpcJsXds from "@grpc/grpc-js-xds";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  createManagementServer,
  EDS_TYPE_URL,
  LDS_TYPE_URL,
  type ManagementServer,
} from "@xdskit/control-plane";
import { createXdsRelay, type XdsRelay } from "@xdskit/xds-relay";
import { afterAll, beforeAll, expect, test } from "vitest";
import { bootstrapJson, XDS_BOOTSTRAP_OPTION } from "../src/bootstrap.js";
import { callUntil, type EchoBackend, startEchoBackend } from "../src/echo-backend.js";

let controlPlane: ManagementServer;
let relay: XdsRelay;
let backendA: EchoBackend;
let backendB: EchoBackend;
const clients: grpc.Client[] = [];

const endpointsFor = (backend: EchoBackend) =>
  buildClusterLoadAssignment({
    clusterName: "echo-cluster",
    localities: [{ region: "local", zone: "a", endpoints: [{ address: "127.0.0.1", port: backend.port }] }],
  });

beforeAll(async () => {
  grpcJsXds.register();
  [controlPlane, backendA, backendB] = await Promise.all([
    createManagementServer(),
    startEchoBackend("A"),
    startEchoBackend("B"),
  ]);
  controlPlane.setSnapshot([
    buildListener({ name: "echo.test", routeConfigName: "echo-route" }),
    buildRouteConfiguration({ name: "echo-route", cluster: "echo-cluster" }),
    buildCluster({ name: "echo-cluster" }),
    endpointsFor(backendA),
  ]);
  relay = await createXdsRelay({
    upstream: {
      bootstrap: {
        xds_servers: [{ server_uri: controlPlane.address, channel_creds: [{ type: "insecure" }] }],
        node: { id: "relay" },
      },
      env: {},
    },
  });
  for (const node of ["grpc-js-1", "grpc-js-2"]) {
    clients.push(
      new grpc.Client("xds:///echo.test", grpc.credentials.createInsecure(), {
        [XDS_BOOTSTRAP_OPTION]: bootstrapJson(relay.address, node),
      }),
    );
  }
});

afterAll(async () => {
  for (const client of clients) client.close();
  await relay?.close();
  await Promise.all([controlPlane?.close(), backendA?.close(), backendB?.close()]);
});

test("grpc-js-xds resolves through the relay and routes calls; the relay is one upstream stream", async () => {
  for (const client of clients) expect(await callUntil(client, (r) => r.ok)).toEqual({ ok: true, reply: "A:ping" });
  for (const node of ["grpc-js-1", "grpc-js-2"]) {
    for (const typeUrl of [LDS_TYPE_URL, EDS_TYPE_URL]) {
      await relay.hooks.waitForRequest((r) => r.node?.id === node && r.typeUrl === typeUrl && r.disposition === "ack");
    }
  }
  const upstreamStreams = controlPlane.streams();
  expect(upstreamStreams.map((s) => s.node?.id)).toEqual(["relay"]);
  expect(upstreamStreams[0]?.types.map((t) => t.resourceNames.length)).toEqual([1, 1, 1, 1]);
  expect(relay.stats()).toMatchObject({ upstreamSubscriptions: 4, streams: 2 });
});

test("an endpoint move upstream moves both channels' traffic", async () => {
  controlPlane.setResource(endpointsFor(backendB));
  for (const client of clients)
    expect(await callUntil(client, (r) => r.reply === "B:ping")).toEqual({ ok: true, reply: "B:ping" });
});

test("a relay restart: the channels reconnect to it and keep routing", async () => {
  const mark = relay.hooks.mark();
  await relay.restart();
  for (const node of ["grpc-js-1", "grpc-js-2"]) {
    await relay.hooks.waitForRequest((r) => r.node?.id === node && r.typeUrl === EDS_TYPE_URL, {
      after: mark,
      timeoutMs: 15_000,
    });
  }
  for (const client of clients) expect(await callUntil(client, (r) => r.ok)).toEqual({ ok: true, reply: "B:ping" });
});
