// Child process of xds-client.ts: one client (ours or @grpc/grpc-js-xds) watches N names in one tick and
// reports, as JSON lines on stdout, when its watch calls returned and when the last watcher callback ran.
import { createRequire } from "node:module";
import { clusterResourceType, createXdsClient, endpointResourceType } from "@xdskit/xds-client";

// argv: which client, the server's port, the resource type ("eds" or "cds"), a name prefix and a count: one name
// (the prefix) for a count of 1, else `<prefix>-0` ... `<prefix>-<count-1>`.
const [which, port, kind, prefix, countText] = process.argv.slice(2);
const count = Number(countText);
const names = count === 1 ? [prefix!] : Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
const bootstrap = {
  xds_servers: [{ server_uri: `127.0.0.1:${port}`, channel_creds: [{ type: "insecure" }] }],
  node: { id: `bench-${which}`, cluster: "bench", locality: { region: "r", zone: "z" } },
};
const now = () => performance.timeOrigin + performance.now();
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);

let received = 0;
const seen = new Set<string>();
function onUpdate(name: string): void {
  if (seen.has(name)) return;
  seen.add(name);
  received += 1;
  if (received === count) {
    say({ event: "done", t: now(), maxRssKb: process.resourceUsage().maxRSS });
    setImmediate(() => process.exit(0));
  }
}

if (which === "xdskit") {
  const client = createXdsClient({ bootstrap, env: {} });
  const start = now();
  const type = kind === "cds" ? clusterResourceType : endpointResourceType;
  for (const name of names) {
    client.watch(type as typeof endpointResourceType, name, {
      onResourceChanged: (result) => {
        if (result.ok) onUpdate(name);
      },
      onAmbientError: () => {},
    });
  }
  say({ event: "watched", start, t: now() });
} else {
  const require = createRequire(import.meta.url);
  const base = "@grpc/grpc-js-xds/build/src";
  const { XdsClient, Watcher } = require(`${base}/xds-client.js`);
  const { validateBootstrapConfig } = require(`${base}/xds-bootstrap.js`);
  const { EndpointResourceType } = require(`${base}/xds-resource-type/endpoint-resource-type.js`);
  const { ClusterResourceType } = require(`${base}/xds-resource-type/cluster-resource-type.js`);
  const type = kind === "cds" ? ClusterResourceType : EndpointResourceType;
  const client = new XdsClient(validateBootstrapConfig(bootstrap));
  const start = now();
  for (const name of names) {
    type.startWatch(
      client,
      name,
      new Watcher({ onResourceChanged: () => onUpdate(name), onError: () => {}, onResourceDoesNotExist: () => {} }),
    );
  }
  say({ event: "watched", start, t: now() });
}
