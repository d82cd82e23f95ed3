// Federation (A47) over real HTTP/2: an `xds://authority/name` target takes its Listener name from that
// authority's `client_listener_resource_name_template` and its resources from that authority's servers (a second
// control plane here, the default one holding nothing for it), with the name percent-encoded as an xdstp path; the
// top-level `client_default_listener_resource_name_template` applies to `xds:///name` targets, percent-encoded only
// when it starts with `xdstp:` (and then sends the Listener to its authority's servers too).
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  type ManagementServer,
} from "@xdskit/control-plane";
import { type BootstrapConfig, createXdsClient, type XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient, served } from "./support/echo-client.js";
import { NODE_ID, startControlPlane } from "./support/harness.js";

const AUTHORITY = "fed.example";
const LISTENER = `xdstp://${AUTHORITY}/envoy.config.listener.v3.Listener`;

/** Listener `listener` -> its route -> its cluster -> `backend`, every name below the federated authority's. */
function federatedChain(listener: string, id: string, backend: Backend, domains: readonly string[] = ["*"]) {
  const route = `xdstp://${AUTHORITY}/envoy.config.route.v3.RouteConfiguration/${id}`;
  const cluster = `xdstp://${AUTHORITY}/envoy.config.cluster.v3.Cluster/${id}`;
  // A cluster with an xdstp name must name its ClusterLoadAssignment.
  const endpoints = `xdstp://${AUTHORITY}/envoy.config.endpoint.v3.ClusterLoadAssignment/${id}`;
  return [
    buildListener({ name: listener, routeConfigName: route }),
    buildRouteConfiguration({ name: route, cluster, domains }),
    buildCluster({ name: cluster, edsServiceName: endpoints }),
    buildClusterLoadAssignment({ clusterName: endpoints, localities: [{ zone: "z", endpoints: [backend.address] }] }),
  ];
}

describe("federation (A47)", () => {
  let main: ManagementServer;
  let federated: ManagementServer;
  let a: Backend;
  let b: Backend;
  const clients: XdsClient[] = [];

  beforeAll(async () => {
    [main, federated, a, b] = await Promise.all([
      startControlPlane(),
      startControlPlane(),
      startBackend("a"),
      startBackend("b"),
    ]);
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await Promise.all([a.close(), b.close(), main.close(), federated.close()]);
  });

  function clientWith(extra: Partial<BootstrapConfig>): XdsClient {
    const client = createXdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: main.address, channel_creds: [{ type: "insecure" }] }],
        node: { id: NODE_ID },
        authorities: {
          [AUTHORITY]: {
            xds_servers: [{ server_uri: federated.address, channel_creds: [{ type: "insecure" }] }],
            client_listener_resource_name_template: `${LISTENER}/grpc/%s`,
          },
        },
        ...extra,
      },
    });
    clients.push(client);
    return client;
  }

  it("xds://authority/name: the authority's template and servers, the name percent-encoded except for pchar and '/'", async () => {
    // RFC 3986 pchar (unreserved, sub-delims, ':' and '@') and '/' stay as they are; a space and 'é' (UTF-8) are
    // encoded. The virtual host matches the name as the target gives it, decoded.
    const name = "svc:8080/v1@eu;x=1,y+z/café menu";
    const listener = `${LISTENER}/grpc/svc:8080/v1@eu;x=1,y+z/caf%C3%A9%20menu`;
    federated.setSnapshot(federatedChain(listener, "one", a, [name]));
    const client = clientWith({});
    const transport = createXdsTransport({ target: `xds://${AUTHORITY}/${encodeURI(name)}`, client });
    try {
      expect(await served(echoClient(transport), { timeoutMs: 10_000 })).toBe("a");
      // Only the authority's server was asked for it.
      expect(federated.streams().length).toBeGreaterThan(0);
      expect(main.streams()).toEqual([]);
    } finally {
      await transport.close();
    }
  });

  it("xds:///name: the top-level default template, replaced as it is when it is not an xdstp name", async () => {
    main.setSnapshot([
      buildListener({ name: "grpc/client/svc:9 x", routeConfigName: "plain-route" }),
      buildRouteConfiguration({ name: "plain-route", cluster: "plain-cluster" }),
      buildCluster({ name: "plain-cluster" }),
      buildClusterLoadAssignment({ clusterName: "plain-cluster", localities: [{ zone: "z", endpoints: [b.address] }] }),
    ]);
    const client = clientWith({ client_default_listener_resource_name_template: "grpc/client/%s" });
    const transport = createXdsTransport({ target: "xds:///svc:9%20x", client });
    try {
      expect(await served(echoClient(transport), { timeoutMs: 10_000 })).toBe("b");
    } finally {
      await transport.close();
    }
  });

  it("xds:///name with an xdstp default template: percent-encoded, fetched from the template's authority", async () => {
    const listener = `${LISTENER}/default/caf%C3%A9`;
    federated.setSnapshot(federatedChain(listener, "two", b));
    const client = clientWith({ client_default_listener_resource_name_template: `${LISTENER}/default/%s` });
    const transport = createXdsTransport({ target: "xds:///café", client });
    try {
      expect(await served(echoClient(transport), { timeoutMs: 10_000 })).toBe("b");
    } finally {
      await transport.close();
    }
  });

  it("refuses an authority the bootstrap does not list, naming it", () => {
    const client = clientWith({});
    expect(() => createXdsTransport({ target: "xds://elsewhere.example/svc", client })).toThrow(
      /authority "elsewhere.example" is not in the bootstrap's authorities/,
    );
  });
});
