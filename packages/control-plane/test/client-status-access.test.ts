// CSDS on the control plane's port, over mTLS with certificates from a test CA (issue 25.6): a CSDS service added
// with `routes` answers one ClientConfig per registered xDS client; each peer reads only the clients it may. With
// `identity`, by default the clients whose node its certificate is bound to; `canReadClientStatus` decides otherwise.
import { create } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  ClientStatusDiscoveryService,
  ClientStatusResponseSchema,
} from "@xdskit/protos/envoy/service/status/v3/csds_pb";
import { createTestCa, issueLocalhost, type TestCa, type TestCertificate } from "@xdskit/test-pki";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createManagementServer, type ManagementServer, type ManagementServerOptions } from "../src/index.js";
import { clientTls } from "./tls-support.js";

const spiffe = (name: string) => `spiffe://xdskit.test/ns/default/sa/${name}`;

/** What the registered clients dump: node-a under two scopes, node-b under one. */
const dump = () =>
  create(ClientStatusResponseSchema, {
    config: [
      { node: { id: "node-a" }, clientScope: "#server" },
      { node: { id: "node-b" }, clientScope: "#server" },
      { node: { id: "node-a" }, clientScope: "xds:///shop" },
    ],
  });

let ca: TestCa;
let certA: TestCertificate;
let certB: TestCertificate;
let admin: TestCertificate;
const servers: ManagementServer[] = [];

beforeAll(() => {
  ca = createTestCa();
  certA = ca.issue({ commonName: "node-a", uris: [spiffe("node-a")] });
  certB = ca.issue({ commonName: "node-b", uris: [spiffe("node-b")] });
  admin = ca.issue({ commonName: "csds-reader", uris: [spiffe("csds-reader")] });
}, 60_000);

afterAll(() => Promise.all(servers.map((s) => s.close())));

async function serverWith(options: Partial<ManagementServerOptions>): Promise<ManagementServer> {
  const server = await createManagementServer({
    tls: { ...issueLocalhost(ca), ca: ca.cert },
    routes: (router) =>
      router.service(ClientStatusDiscoveryService, {
        fetchClientStatus: () => dump(),
        async *streamClientStatus(requests) {
          for await (const _ of requests) yield dump();
        },
      }),
    ...options,
  });
  servers.push(server);
  return server;
}

function csdsAs(server: ManagementServer, cert: TestCertificate): Client<typeof ClientStatusDiscoveryService> {
  return createClient(
    ClientStatusDiscoveryService,
    createGrpcTransport({ baseUrl: `https://localhost:${server.port}`, nodeOptions: clientTls(ca, cert) }),
  );
}

/** `node/scope` of each config a peer reads, unary and streaming (both must agree). */
async function readable(server: ManagementServer, cert: TestCertificate): Promise<string[]> {
  const csds = csdsAs(server, cert);
  const unary = (await csds.fetchClientStatus({})).config.map((c) => `${c.node?.id}/${c.clientScope}`);
  async function* once() {
    yield {};
  }
  let streamed: string[] = [];
  for await (const response of csds.streamClientStatus(once())) {
    streamed = response.config.map((c) => `${c.node?.id}/${c.clientScope}`);
  }
  expect(streamed).toEqual(unary);
  return unary;
}

const nodeBySpiffeId = new Map([
  [spiffe("node-a"), "node-a"],
  [spiffe("node-b"), "node-b"],
]);
const identity = {
  nodeIdFromCertificate: (cert: { spiffeId: string | undefined }) => nodeBySpiffeId.get(cert.spiffeId ?? ""),
};

describe("who reads which client of CSDS on the control plane's port", () => {
  it("with identity, by default: each certificate reads the clients of the node it is bound to, nothing else", async () => {
    const server = await serverWith({ identity });
    expect(await readable(server, certA)).toEqual(["node-a/#server", "node-a/xds:///shop"]);
    expect(await readable(server, certB)).toEqual(["node-b/#server"]);
    // A verified certificate bound to no node reads nothing.
    expect(await readable(server, admin)).toEqual([]);
  });

  it("canReadClientStatus decides instead: here a reader certificate reads every client, nodes nothing", async () => {
    const server = await serverWith({
      identity,
      canReadClientStatus: (peer) => peer.certificate?.spiffeId === spiffe("csds-reader"),
    });
    expect(await readable(server, admin)).toEqual(["node-a/#server", "node-b/#server", "node-a/xds:///shop"]);
    expect(await readable(server, certA)).toEqual([]);
  });

  it("canReadClientStatus sees the client's scope: node-a may read only its #server client", async () => {
    const server = await serverWith({
      canReadClientStatus: (peer, client) =>
        peer.certificate?.commonName === client.node?.id && client.clientScope === "#server",
    });
    expect(await readable(server, certA)).toEqual(["node-a/#server"]);
  });

  it("without identity or a policy, every verified peer reads every client (documented)", async () => {
    const server = await serverWith({});
    expect(await readable(server, certB)).toEqual(["node-a/#server", "node-b/#server", "node-a/xds:///shop"]);
  });
});
