// `npm run demo`: an @xdskit/control-plane and an @xdskit/xds-client on 127.0.0.1. The client follows a
// listener → route configuration → cluster → endpoints chain the way a gRPC channel does; the demo then changes
// the configuration (a new endpoint, an invalid cluster the client NACKs, a TP3 error, a removal), prints what the
// client saw at each step, and ends with the client's CSDS dump. On the way, the client calls two backends through
// @xdskit/connect-xds (routed by that same configuration): the backends report ORCA per call through
// @xdskit/orca-lrs-bridge, and the control plane's LRS sink prints the load the transport reported.
// The client is wrapped by @xdskit/dpds-wrapper: at the end, the control plane serves the cluster in two variants
// and moves the client from one to the other through its DPDS resource.

import * as net from "node:net";
import { createClient } from "@connectrpc/connect";
import { createXdsTransport } from "@xdskit/connect-xds";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  createManagementServer,
  formatClusterLoads,
  type ManagementServer,
} from "@xdskit/control-plane";
import { formatClientConfig } from "@xdskit/csds";
import { withDynamicParameters } from "@xdskit/dpds-wrapper";
import { ClientStatusDiscoveryService } from "@xdskit/protos/envoy/service/status/v3/csds_pb";
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
import { clusterVariants, dpdsLogger, publishVariants, switchToCanary, until } from "./dpds-switch.js";
import { startOrcaBackend } from "./orca-backends.js";

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
  if (u.kind === "server") return `server Listener on ${u.address.host}:${u.address.port}`;
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

/** What the LB policy names gRPC gives a cluster's policy mean, in a few words. */
const LB_POLICIES: Record<string, string> = {
  xds_wrr_locality_experimental: "weighted across localities, round robin within each",
  round_robin: "round robin",
  ring_hash_experimental: "hash of each call",
};

function describeCluster(u: ClusterUpdate): string {
  const kind = u.type === "eds" ? `EDS service ${u.edsServiceName}` : u.type;
  const lb = Object.keys(u.lbPolicy[0] ?? {})[0] ?? "?";
  const meaning = LB_POLICIES[lb] ? ` (${LB_POLICIES[lb]})` : "";
  return `${kind}, lb ${lb}${meaning}, load reports ${u.lrsServer ? "to this server" : "off"}`;
}

/** `1 endpoint`, `3 endpoints`. */
function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}

function describeEndpoints(u: EndpointUpdate): string {
  const localities = u.priorities.flatMap((p) => p.localities);
  const addresses = localities.flatMap((l) =>
    l.endpoints.map((e) => `${e.addresses[0]?.address}:${e.addresses[0]?.port}`),
  );
  return `${count(localities.length, "locality", "localities")}, ${count(addresses.length, "endpoint")}: ${addresses.join(" ")}`;
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
    if (l.kind !== "client" || l.route.type !== "rds") return;
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

/**
 * The client's calls go through @xdskit/connect-xds: routed by the same configuration the chain above printed
 * (listener → routes → cluster → priority → locality → endpoint), counted per locality with each call's ORCA
 * report and reported to the cluster's LRS server (`lrs_server: self`: the control plane) without user code.
 * Closing the transport sends what it counted in one last report.
 */
async function callThroughTheTransport(server: ManagementServer, client: XdsClient): Promise<void> {
  const transport = createXdsTransport({ target: "xds:///demo.example", client });
  const csds = createClient(ClientStatusDiscoveryService, transport);
  const calls = 18;
  const mark = server.lrs.mark();
  for (let i = 0; i < calls; i++) await csds.fetchClientStatus({});
  out(`  [client] ${calls} calls through createXdsTransport({ target: "xds:///demo.example" })`);
  await transport.close();
  const report = await server.lrs.waitForReport(
    (r) =>
      r.nodeId === "demo-client" &&
      r.clusterStats.some((c) => c.upstreamLocalityStats.some((l) => l.totalIssuedRequests > 0n)),
    { after: mark, timeoutMs: 10_000 },
  );
  out("  [control plane] load report received; the cluster selects the utilizations and named_metrics.queue_depth,");
  out("  so named_metrics.cache_hits, which the backends also send, is left out:");
  for (const line of formatClusterLoads(report.loads).split("\n")) out(`    ${line}`);
}

/** A 127.0.0.1 address nothing listens on: a port bound, then released. */
async function refusingAddress(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `127.0.0.1:${port}`;
}

async function main(): Promise<void> {
  const started = Date.now();
  // A long report interval: the transport's one report, sent when it closes, holds every call of step 3.
  const server = await createManagementServer({ host: "127.0.0.1", port: 0, lrsPolicy: { intervalMs: 60_000 } });
  const [backendA, backendB] = await Promise.all([startOrcaBackend(0.6, 0.45), startOrcaBackend(0.3, 0.7)]);
  // Endpoints with nothing behind them (local ports that refuse connections): the transport skips them.
  const [spareA, spareB] = await Promise.all([refusingAddress(), refusingAddress()]);
  const demoCluster = buildCluster({ name: "demo-cluster", edsServiceName: "demo-eds", lrsServerSelf: true });
  demoCluster.lrsReportEndpointMetrics = [
    "cpu_utilization",
    "mem_utilization",
    "application_utilization",
    "named_metrics.queue_depth",
  ];
  server.hooks.on("request", (event) => {
    if (event.disposition === "nack")
      out(`  [control plane] NACK from ${event.node?.id}:\n      ${event.errorDetail?.message}`);
  });
  server.setSnapshot([
    buildListener({ name: "demo.example", routeConfigName: "demo-routes" }),
    buildRouteConfiguration({ name: "demo-routes", cluster: "demo-cluster" }),
    demoCluster,
    buildClusterLoadAssignment({
      clusterName: "demo-eds",
      localities: [
        { region: "eu-west", zone: "a", endpoints: [`127.0.0.1:${backendA.port}`, spareA] },
        { region: "eu-west", zone: "b", endpoints: [`127.0.0.1:${backendB.port}`] },
      ],
    }),
  ]);
  // DPDS: demo-client's own resource, with no parameters for now.
  server.setDynamicParameters("demo-client", {});
  out("xdskit demo: @xdskit/control-plane and @xdskit/xds-client over HTTP/2 on 127.0.0.1");
  out(`  [control plane] serving ADS on ${server.address}`);
  out("  (the client is wrapped by @xdskit/dpds-wrapper; DPDS, the dynamic parameters discovery service, is how the");
  out("  server tells each client which variant of a resource to use: its lines start with [dpds-wrapper], step 7)");

  const client = withDynamicParameters(
    createXdsClient({
      bootstrap: {
        xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }] }],
        node: { id: "demo-client", locality: { region: "eu-west", zone: "a" } },
      },
      env: {},
    }),
    { logger: dpdsLogger(out) },
  );
  const counter = { n: 0, waiters: [] as (() => void)[] };
  const chainLines: string[] = [];
  followChain(client, "demo.example", (line) => {
    out(line);
    chainLines.push(line);
    counter.n += 1;
    for (const waiter of counter.waiters.splice(0)) waiter();
  });

  out("\n1. the client follows listener → routes → cluster → endpoints");
  out("   (versions come from one counter for the whole server, so each type's versions skip numbers)");
  await eventsAfter(counter, 4);

  out("\n2. a new endpoint appears in zone b");
  server.setResource(
    buildClusterLoadAssignment({
      clusterName: "demo-eds",
      localities: [
        { region: "eu-west", zone: "a", endpoints: [`127.0.0.1:${backendA.port}`, spareA] },
        { region: "eu-west", zone: "b", endpoints: [`127.0.0.1:${backendB.port}`, spareB] },
      ],
    }),
  );
  await eventsAfter(counter, 1);

  out("\n3. calls through @xdskit/connect-xds: the backends report ORCA per call, the client reports load (LRS)");
  out("   (each locality also lists a local port nothing listens on: the transport sees it refuse connections and");
  out("   never picks it, so every call reaches a live backend)");
  await callThroughTheTransport(server, client);

  out("\n4. an invalid cluster (lb_policy RANDOM, which gRPC does not support): NACKed, the good one stays in use");
  out('   ("ambient": an error the watcher is told while the resource it has stays in force)');
  const bad = buildCluster({ name: "demo-cluster", edsServiceName: "demo-eds", lrsServerSelf: true });
  bad.lrsReportEndpointMetrics = demoCluster.lrsReportEndpointMetrics;
  bad.lbPolicy = 3;
  const mark = server.hooks.mark();
  server.setResource(bad);
  await Promise.all([
    eventsAfter(counter, 1),
    server.hooks.waitForRequest((r) => r.disposition === "nack", { after: mark, timeoutMs: 5_000 }),
  ]);

  out("\n5. the server reports a TP3 error for the endpoints (PERMISSION_DENIED): ambient, the cached copy is kept");
  out("   (TP3: the xDS proposal that lets a server send an error in place of one resource)");
  server.setResourceError(EDS_TYPE, "demo-eds", { code: 7, message: "demo-client may not read demo-eds" });
  await eventsAfter(counter, 1);

  out("\n6. the listener is removed: A88 keeps it and reports does-not-exist as ambient");
  out("   (A88: gRPC's proposal on xDS data errors: a client keeps a resource the server stops sending, by default)");
  server.removeResource(LDS_TYPE, "demo.example");
  await eventsAfter(counter, 1);

  out("\n7. DPDS: the control plane now serves demo-cluster in two variants, track=stable and track=canary, and");
  out("   tells demo-client to use stable: the client moves its cluster watch to the stable variant");
  publishVariants(server, demoCluster);
  const held = (variant: string) => () =>
    clusterVariants(client, "demo-cluster").join() ===
    `demo-cluster{track=${variant}} (ACKED) holds the variant track=${variant}`;
  await until(held("stable"));
  for (const line of clusterVariants(client, "demo-cluster")) out(`  [client] CSDS: ${line}`);

  out("\n8. DPDS switches demo-client to track=canary: the client subscribes to canary and cancels stable only once");
  out("   canary has answered (make-before-break), so the cluster watcher never goes without a cluster");
  const before = chainLines.length;
  switchToCanary(server);
  await Promise.all([eventsAfter(counter, 2), until(held("canary"))]);
  for (const line of clusterVariants(client, "demo-cluster")) out(`  [client] CSDS: ${line}`);
  const during = chainLines.slice(before).filter((line) => line.includes("CDS demo-cluster"));
  const errors = during.filter((line) => / (error|ambient) /.test(line)).length;
  out(
    `  [client] the cluster watcher was told ${during.length - errors} update(s) and ${errors} error(s) during the switch`,
  );

  out("\nthe client's CSDS dump (envoy.service.status.v3.ClientConfig):");
  for (const line of formatClientConfig(client.dumpResources()).split("\n")) out(`  ${line}`);
  out('  (last error: "<version>: <details>", the version of the response the error came with; "-" when nothing');
  out("  was received, e.g. the does-not-exist timer)");
  await client.close();
  await Promise.all([server.close(), backendA.close(), backendB.close()]);
  out(`\ndone in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  out("\nnext:");
  out(
    "  examples/connect-greeter   a first mesh: Connect backends, `xdskit serve` on a folder of YAML, a client through",
  );
  out("                             createXdsTransport (its README: npm run setup, backends, serve, client)");
  out("  examples/composed-client   the packages of this demo in one short program to copy");
  out("  packages/cli               xdskit, the command line: serve a folder of YAML, csds, watch, list, relay");
  out("                             (in examples/connect-greeter after its setup: npx xdskit --help)");
  out("  XDSKIT_LOG=debug npm run demo   every package's log on stderr (docs/logging.md)");
}

main().catch((error) => {
  process.stderr.write(`demo failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
