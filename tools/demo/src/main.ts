// `npm run demo`: an @xdskit/control-plane and an @xdskit/xds-client on 127.0.0.1. The client follows a
// listener → route configuration → cluster → endpoints chain the way a gRPC channel does; the demo then changes
// the configuration (a new endpoint, an invalid cluster the client NACKs, a TP3 error, a removal), prints what the
// client saw at each step, and ends with the client's CSDS dump.

import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  createManagementServer,
} from "@xdskit/control-plane";
import { formatClientConfig } from "@xdskit/csds";
import {
  type ClusterUpdate,
  clusterResourceType,
  createXdsClient,
  type EndpointUpdate,
  endpointResourceType,
  type ListenerUpdate,
  listenerResourceType,
  type ResourceType,
  type RouteConfigurationUpdate,
  routeConfigurationResourceType,
  type XdsClient,
  type XdsError,
} from "@xdskit/xds-client";

const EDS_TYPE = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
const LDS_TYPE = "type.googleapis.com/envoy.config.listener.v3.Listener";
const out = (line = "") => process.stdout.write(`${line}\n`);

const short: Record<string, string> = {
  ListenerResource: "LDS",
  RouteConfigurationResource: "RDS",
  ClusterResource: "CDS",
  EndpointResource: "EDS",
};

function describeListener(u: ListenerUpdate): string {
  return u.route.type === "rds" ? `→ route configuration ${u.route.routeConfigName}` : "inline route configuration";
}

function describeRoutes(u: RouteConfigurationUpdate): string {
  return u.virtualHosts
    .map((vh) => {
      const action = vh.routes[0]?.action;
      const target = action?.type === "cluster" ? `cluster ${action.cluster}` : (action?.type ?? "no route");
      return `virtual host [${vh.domains.join(",")}] → ${target}`;
    })
    .join("; ");
}

function describeCluster(u: ClusterUpdate): string {
  const kind = u.type === "eds" ? `EDS service ${u.edsServiceName}` : u.type;
  const lb = Object.keys(u.lbPolicy[0] ?? {})[0] ?? "?";
  return `${kind}, lb ${lb}, load reports ${u.lrsServer ? "to this server" : "off"}`;
}

function describeEndpoints(u: EndpointUpdate): string {
  const localities = u.priorities.flatMap((p) => p.localities);
  const addresses = localities.flatMap((l) =>
    l.endpoints.map((e) => `${e.addresses[0]?.address}:${e.addresses[0]?.port}`),
  );
  return `${localities.length} localities, ${addresses.length} endpoints: ${addresses.join(" ")}`;
}

/** Follows the chain: each update names the next resource to watch, as an xDS resolver does. */
function followChain(client: XdsClient, listenerName: string, onEvent: (line: string) => void) {
  const watches = new Map<string, { name: string; cancel: () => void }>();
  function watch<T>(type: ResourceType<T>, name: string, describe: (u: T) => string, next?: (u: T) => void): void {
    const held = watches.get(type.typeName);
    if (held?.name === name) return;
    held?.cancel();
    const label = `${short[type.typeName] ?? type.typeName} ${name}`.padEnd(24);
    const cancel = client.watch(type, name, {
      onResourceChanged(result) {
        if (result.ok) {
          onEvent(`  ${label} v${result.version.padEnd(3)} ${describe(result.resource)}`);
          next?.(result.resource);
        } else onEvent(`  ${label} error   ${result.error.message}`);
      },
      onAmbientError(error: XdsError) {
        onEvent(`  ${label} ambient ${error.message}`);
      },
    });
    watches.set(type.typeName, { name, cancel });
  }
  watch(listenerResourceType, listenerName, describeListener, (l) => {
    if (l.route.type !== "rds") return;
    watch(routeConfigurationResourceType, l.route.routeConfigName, describeRoutes, (r) => {
      const action = r.virtualHosts[0]?.routes[0]?.action;
      if (action?.type !== "cluster") return;
      watch(clusterResourceType, action.cluster, describeCluster, (c) => {
        if (c.type === "eds") watch(endpointResourceType, c.edsServiceName, describeEndpoints);
      });
    });
  });
}

/** Resolves once `count` more events were printed, or after `ms` (some steps cause nothing more). */
function eventsAfter(counter: { n: number; waiters: (() => void)[] }, count: number, ms = 3_000): Promise<void> {
  const target = counter.n + count;
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const check = () => {
      if (counter.n >= target) {
        clearTimeout(timer);
        resolve();
      } else counter.waiters.push(check);
    };
    check();
  });
}

async function main(): Promise<void> {
  const started = Date.now();
  const server = await createManagementServer({ host: "127.0.0.1", port: 0 });
  server.hooks.on("request", (event) => {
    if (event.disposition === "nack")
      out(`  [control plane] NACK from ${event.node?.id}:\n      ${event.errorDetail?.message}`);
  });
  server.setSnapshot([
    buildListener({ name: "demo.example", routeConfigName: "demo-routes" }),
    buildRouteConfiguration({ name: "demo-routes", cluster: "demo-cluster" }),
    buildCluster({ name: "demo-cluster", edsServiceName: "demo-eds", lrsServerSelf: true }),
    buildClusterLoadAssignment({
      clusterName: "demo-eds",
      localities: [
        { region: "eu-west", zone: "a", endpoints: ["10.0.0.1:8080", "10.0.0.2:8080"] },
        { region: "eu-west", zone: "b", endpoints: ["10.0.1.1:8080"] },
      ],
    }),
  ]);
  out("xdskit demo: @xdskit/control-plane and @xdskit/xds-client over HTTP/2 on 127.0.0.1");
  out(`  [control plane] serving ADS on ${server.address}`);

  const client = createXdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }] }],
      node: { id: "demo-client", locality: { region: "eu-west", zone: "a" } },
    },
    env: {},
  });
  const counter = { n: 0, waiters: [] as (() => void)[] };
  followChain(client, "demo.example", (line) => {
    out(line);
    counter.n += 1;
    for (const waiter of counter.waiters.splice(0)) waiter();
  });

  out("\n1. the client follows listener → routes → cluster → endpoints");
  await eventsAfter(counter, 4);

  out("\n2. a new endpoint appears in zone b");
  server.setResource(
    buildClusterLoadAssignment({
      clusterName: "demo-eds",
      localities: [
        { region: "eu-west", zone: "a", endpoints: ["10.0.0.1:8080", "10.0.0.2:8080"] },
        { region: "eu-west", zone: "b", endpoints: ["10.0.1.1:8080", "10.0.1.2:8080"] },
      ],
    }),
  );
  await eventsAfter(counter, 1);

  out("\n3. an invalid cluster (lb_policy RANDOM, which gRPC does not support): NACKed, the good one stays in use");
  const bad = buildCluster({ name: "demo-cluster", edsServiceName: "demo-eds", lrsServerSelf: true });
  bad.lbPolicy = 3;
  const mark = server.hooks.mark();
  server.setResource(bad);
  await Promise.all([
    eventsAfter(counter, 1),
    server.hooks.waitForRequest((r) => r.disposition === "nack", { after: mark, timeoutMs: 5_000 }),
  ]);

  out("\n4. the server reports a TP3 error for the endpoints (PERMISSION_DENIED): ambient, the cached copy is kept");
  server.setResourceError(EDS_TYPE, "demo-eds", { code: 7, message: "demo-client may not read demo-eds" });
  await eventsAfter(counter, 1);

  out("\n5. the listener is removed: A88 keeps it and reports does-not-exist as ambient");
  server.removeResource(LDS_TYPE, "demo.example");
  await eventsAfter(counter, 1);

  out("\nthe client's CSDS dump (envoy.service.status.v3.ClientConfig):");
  for (const line of formatClientConfig(client.dumpResources()).split("\n")) out(`  ${line}`);
  await client.close();
  await server.close();
  out(`\ndone in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((error) => {
  process.stderr.write(`demo failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
