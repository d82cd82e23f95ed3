// The mesh resources end to end: @xdskit/control-plane's mesh builders (server Listeners with filter chains, TLS and
// RBAC; server routes; clusters with UpstreamTlsContext) served over real HTTP/2 and decoded by the client's resource
// types. Then a malformed server Listener among good ones: the client NACKs it, naming the field, and applies the
// others (A46), in both ADS protocols.
import {
  buildCluster,
  buildRbacFilter,
  buildServerListener,
  buildServerRouteConfiguration,
  buildUpstreamTlsSocket,
  createManagementServer,
  type ManagementServer,
  rbacPerRoute,
} from "@xdskit/control-plane";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type ClusterUpdate,
  clusterResourceType,
  compileRbac,
  createXdsClient,
  evaluateRbac,
  type ListenerUpdate,
  listenerResourceType,
  type ResourceResult,
  type RouteConfigurationUpdate,
  routeConfigurationResourceType,
  selectFilterChain,
  type XdsClient,
} from "../src/index.js";

const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";

let server: ManagementServer;
const clients: XdsClient[] = [];

beforeEach(async () => {
  server = await createManagementServer({ host: "127.0.0.1", port: 0 });
});
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await server.close();
});

function clientFor(apiType: "GRPC" | "DELTA_GRPC"): XdsClient {
  const client = createXdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: apiType }],
      node: { id: "mesh-node" },
      certificate_providers: {
        identity: { plugin_name: "file_watcher", config: { certificate_file: "c.pem", private_key_file: "k.pem" } },
        roots: { plugin_name: "file_watcher", config: { ca_certificate_file: "ca.pem" } },
      },
    },
    env: {},
  });
  clients.push(client);
  return client;
}

/** The first result of a watch (resource or error); the watch stays until the client closes. */
function first<T>(
  client: XdsClient,
  type: Parameters<XdsClient["watch"]>[0],
  name: string,
): Promise<ResourceResult<T>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no result for ${name} within 5 s`)), 5_000);
    let settled = false;
    client.watch(type, name, {
      onResourceChanged(result) {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result as ResourceResult<T>);
      },
      onAmbientError() {},
    });
  });
}

const authz = {
  action: "ALLOW" as const,
  policies: {
    "team-a": {
      permissions: [
        {
          rule: {
            case: "urlPath" as const,
            value: {
              rule: { case: "path" as const, value: { matchPattern: { case: "prefix" as const, value: "/pkg.Svc/" } } },
            },
          },
        },
      ],
      principals: [
        {
          identifier: {
            case: "authenticated" as const,
            value: { principalName: { matchPattern: { case: "prefix" as const, value: "spiffe://mesh/ns/a/" } } },
          },
        },
      ],
    },
  },
};

function goodServerListener(name: string) {
  return buildServerListener({
    name,
    address: { host: "0.0.0.0", port: 50051 },
    filterChains: [
      {
        name: "mtls",
        match: { sourcePrefixRanges: ["10.0.0.0/8"] },
        tls: { identity: "identity", roots: "roots" },
        routeConfigName: "server-routes",
        httpFilters: [buildRbacFilter(authz)],
      },
    ],
    defaultFilterChain: {
      name: "plaintext",
      routeConfig: buildServerRouteConfiguration({ name: "inline" }),
    },
  });
}

describe.each(["GRPC", "DELTA_GRPC"] as const)("mesh resources over HTTP/2 (%s)", (apiType) => {
  it("decodes what the control plane's mesh builders build", async () => {
    server.setResources([
      goodServerListener("grpc/server?xds.resource.listening_address=0.0.0.0:50051"),
      buildServerRouteConfiguration({
        name: "server-routes",
        routeTypedPerFilterConfig: { "envoy.filters.http.rbac": rbacPerRoute() },
      }),
      buildCluster({
        name: "backend",
        transportSocket: buildUpstreamTlsSocket({
          roots: "roots",
          identity: "identity",
          matchSubjectAltNames: [
            "spiffe://mesh/ns/b/sa/backend",
            { matchPattern: { case: "suffix", value: ".mesh.internal" }, ignoreCase: true },
          ],
          sni: "backend.mesh.internal",
        }),
      }),
    ]);
    const client = clientFor(apiType);
    const listenerResult = await first<ListenerUpdate>(
      client,
      listenerResourceType,
      "grpc/server?xds.resource.listening_address=0.0.0.0:50051",
    );
    if (!listenerResult.ok) throw listenerResult.error;
    const listener = listenerResult.resource;
    if (listener.kind !== "server") throw new Error("expected a server Listener");
    expect(listener.address).toEqual({ host: "0.0.0.0", port: 50051 });
    const mtls = selectFilterChain(listener, { localIp: "10.1.1.1", remoteIp: "10.2.2.2", remotePort: 1234 });
    expect(mtls?.name).toBe("mtls");
    expect(mtls?.tls).toEqual({
      identityCertificate: { instanceName: "identity", certificateName: "" },
      caCertificates: { instanceName: "roots", certificateName: "" },
      requireClientCertificate: true,
    });
    expect(mtls?.route).toEqual({ type: "rds", routeConfigName: "server-routes" });
    expect(mtls?.httpFilters.map((f) => f.filter.type)).toEqual(["rbac", "router"]);
    const rbac = mtls?.httpFilters[0]?.filter;
    if (rbac?.type !== "rbac") throw new Error("expected the RBAC filter");
    const compiled = compileRbac(rbac);
    const call = (principalNames: readonly string[] | undefined) => ({
      path: "/pkg.Svc/Get",
      headers: {},
      peer: { ip: "10.2.2.2", port: 1234, principalNames },
      local: { ip: "10.1.1.1", port: 50051 },
    });
    expect(evaluateRbac(compiled, call(["spiffe://mesh/ns/a/sa/client"]))).toEqual({ allowed: true, policy: "team-a" });
    expect(evaluateRbac(compiled, call(["spiffe://mesh/ns/b/sa/client"])).allowed).toBe(false);
    const plaintext = selectFilterChain(listener, { localIp: "10.1.1.1", remoteIp: "192.168.0.1", remotePort: 1 });
    expect(plaintext?.name).toBe("plaintext");
    expect(plaintext?.tls).toBeUndefined();
    expect(plaintext?.route).toMatchObject({
      type: "inline",
      routeConfiguration: { virtualHosts: [{ domains: ["*"], routes: [{ action: { type: "non_forwarding" } }] }] },
    });

    const routes = await first<RouteConfigurationUpdate>(client, routeConfigurationResourceType, "server-routes");
    if (!routes.ok) throw routes.error;
    const route = routes.resource.virtualHosts[0]!.routes[0]!;
    expect(route.action).toEqual({ type: "non_forwarding" });
    expect(route.typedPerFilterConfig["envoy.filters.http.rbac"]?.parsed).toEqual({ type: "rbac" });

    const cluster = await first<ClusterUpdate>(client, clusterResourceType, "backend");
    if (!cluster.ok) throw cluster.error;
    expect(cluster.resource.security).toEqual({
      caCertificates: { type: "certificate_provider", instanceName: "roots", certificateName: "" },
      identityCertificate: { instanceName: "identity", certificateName: "" },
      matchSubjectAltNames: [
        { type: "exact", value: "spiffe://mesh/ns/b/sa/backend", ignoreCase: false },
        { type: "suffix", value: ".mesh.internal", ignoreCase: true },
      ],
      sni: "backend.mesh.internal",
    });
  });

  it("NACKs a malformed server Listener, naming the field, and applies the good ones beside it", async () => {
    const bad = goodServerListener("bad");
    bad.useOriginalDst = true;
    server.setResources([goodServerListener("good-1"), bad, goodServerListener("good-2")]);
    const client = clientFor(apiType);
    const mark = server.hooks.mark();
    const [good1, broken, good2] = await Promise.all([
      first<ListenerUpdate>(client, listenerResourceType, "good-1"),
      first<ListenerUpdate>(client, listenerResourceType, "bad"),
      first<ListenerUpdate>(client, listenerResourceType, "good-2"),
    ]);
    expect(good1.ok && good1.resource.kind).toBe("server");
    expect(good2.ok && good2.resource.kind).toBe("server");
    expect(broken.ok).toBe(false);
    if (broken.ok) return;
    expect(broken.error.kind).toBe("nacked");
    expect(broken.error.message).toContain("use_original_dst: field not supported (A36)");
    const nack = await server.hooks.waitForRequest((r) => r.disposition === "nack" && r.typeUrl === LDS, {
      after: mark,
      timeoutMs: 5_000,
    });
    expect(nack.errorDetail?.message).toContain("bad: use_original_dst: field not supported (A36)");
    expect(nack.errorDetail?.message).not.toContain("good-");
  });
});
