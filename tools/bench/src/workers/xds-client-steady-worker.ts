// Child process of xds-client-steady.ts: one client (ours or @grpc/grpc-js-xds) in one scenario, reporting as JSON
// lines on stdout (`{ event, t, ... }`, t in ms since the epoch, comparable across processes). Run with --expose-gc.
//   cold <which>                               import + client creation in this fresh process;
//   first <which> <port>                       import, client creation and one CDS watch until its resource arrives;
//   repush <which> <port> <count> <api>        watch <count> clusters; `all` once each arrived, then `middle` and
//                                              `last` at each callback of cluster-<count/2> and cluster-<count-1>;
//   churn <which> <port> <seconds> <perSecond> <pool>  watches come and go; heap after the first second and at the end;
//   heap <which> <port> <count> <kind>         heap once <count> resources of <kind> (cds, lds, rds, eds) are cached,
//                                              each watched, after a GC.
import { createRequire } from "node:module";
import type { BootstrapConfig } from "@xdskit/xds-client";

const [mode, which, ...rest] = process.argv.slice(2);
const now = () => performance.timeOrigin + performance.now();
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);
const gc = (globalThis as { gc?: () => void }).gc;
function heapAfterGc(): number {
  if (!gc) throw new Error("run with --expose-gc");
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

function bootstrap(port: string, api = "GRPC"): BootstrapConfig {
  return {
    xds_servers: [
      {
        server_uri: `127.0.0.1:${port}`,
        channel_creds: [{ type: "insecure" }],
        ...(api === "DELTA_GRPC" ? { api_type: "DELTA_GRPC" as const } : {}),
      },
    ],
    node: { id: `bench-${which}`, cluster: "bench", locality: { region: "r", zone: "z" } },
  };
}

/** The resource types a scenario may watch (clusters unless it says otherwise). */
type Kind = "cds" | "lds" | "rds" | "eds";

/** What a scenario needs of a client: watch a resource name; the returned function cancels the watch. */
interface Client {
  watch(name: string, onUpdate: () => void): () => void;
}

const require = createRequire(import.meta.url);
const GRPC_XDS = "@grpc/grpc-js-xds/build/src";

const GRPC_TYPES: Record<Kind, [file: string, name: string]> = {
  cds: ["cluster-resource-type", "ClusterResourceType"],
  lds: ["listener-resource-type", "ListenerResourceType"],
  rds: ["route-config-resource-type", "RouteConfigurationResourceType"],
  eds: ["endpoint-resource-type", "EndpointResourceType"],
};

async function createClient(port: string, api?: string, kind: Kind = "cds"): Promise<Client> {
  if (which === "xdskit") {
    const xds = await import("@xdskit/xds-client");
    const types = {
      cds: xds.clusterResourceType,
      lds: xds.listenerResourceType,
      rds: xds.routeConfigurationResourceType,
      eds: xds.endpointResourceType,
    } as const;
    const type = types[kind] as typeof xds.clusterResourceType;
    const client = xds.createXdsClient({ bootstrap: bootstrap(port, api), env: {} });
    return {
      watch(name, onUpdate) {
        const cancel = client.watch(type, name, {
          onResourceChanged: (result) => {
            if (result.ok) onUpdate();
          },
          onAmbientError: () => {},
        });
        return cancel;
      },
    };
  }
  const { XdsClient, Watcher } = require(`${GRPC_XDS}/xds-client.js`);
  const { validateBootstrapConfig } = require(`${GRPC_XDS}/xds-bootstrap.js`);
  // What register() sets up for listeners: without the router filter registered, every Listener is rejected.
  if (kind === "lds") require(`${GRPC_XDS}/http-filter/router-filter.js`).setup();
  const [file, exported] = GRPC_TYPES[kind];
  const type = require(`${GRPC_XDS}/xds-resource-type/${file}.js`)[exported];
  const client = new XdsClient(validateBootstrapConfig(bootstrap(port)));
  return {
    watch(name, onUpdate) {
      const watcher = new Watcher({ onResourceChanged: onUpdate, onError: () => {}, onResourceDoesNotExist: () => {} });
      type.startWatch(client, name, watcher);
      return () => type.cancelWatch(client, name, watcher);
    },
  };
}

async function cold(): Promise<void> {
  const start = performance.now();
  if (which === "xdskit") {
    const { createXdsClient } = await import("@xdskit/xds-client");
    const client = createXdsClient({ bootstrap: bootstrap("1"), env: {} });
    say({ event: "cold", ms: performance.now() - start });
    await client.close();
  } else {
    // What `register()` loads (the whole package), then the client the xDS resolver would create.
    require("@grpc/grpc-js-xds");
    const { XdsClient } = require(`${GRPC_XDS}/xds-client.js`);
    const { validateBootstrapConfig } = require(`${GRPC_XDS}/xds-bootstrap.js`);
    new XdsClient(validateBootstrapConfig(bootstrap("1")));
    say({ event: "cold", ms: performance.now() - start });
  }
}

/** Cold, to the first resource: what `cold` measures, then until the watch of cluster-0 delivers it. */
async function first(port: string): Promise<void> {
  const start = performance.now();
  // As in `cold`: grpc-js-xds loads the whole package, as `register()` does.
  if (which === "grpc-js-xds") require("@grpc/grpc-js-xds");
  const client = await createClient(port);
  client.watch("cluster-0", () => {
    say({ event: "first", ms: performance.now() - start });
    process.exit(0);
  });
}

async function repush(port: string, count: number, api: string): Promise<void> {
  const client = await createClient(port, api);
  const seen = new Set<string>();
  let allAt = 0;
  const reported: Record<number, string> = { [count >> 1]: "middle", [count - 1]: "last" };
  for (let i = 0; i < count; i++) {
    const name = `cluster-${i}`;
    const label = reported[i];
    client.watch(name, () => {
      if (allAt === 0) {
        seen.add(name);
        if (seen.size === count) {
          allAt = now();
          say({ event: "all", t: allAt });
        }
      } else if (label !== undefined) say({ event: label, t: now() });
    });
  }
}

async function churn(port: string, seconds: number, perSecond: number, pool: number): Promise<void> {
  const client = await createClient(port);
  const live: (() => void)[] = [];
  const ticksPerSecond = 10;
  const perTick = perSecond / ticksPerSecond;
  let next = 0;
  let updates = 0;
  let heapBefore = 0;
  for (let tick = 0; tick < seconds * ticksPerSecond; tick++) {
    // One second's worth is live at any time: each tick adds `perTick` watchers and cancels the oldest `perTick`.
    for (let k = 0; k < perTick; k++) {
      live.push(client.watch(`cluster-${next++ % pool}`, () => updates++));
    }
    if (live.length > perSecond) for (const cancel of live.splice(0, live.length - perSecond)) cancel();
    if (tick === ticksPerSecond - 1) heapBefore = heapAfterGc();
    await pause(1000 / ticksPerSecond);
  }
  for (const cancel of live.splice(0)) cancel();
  await pause(500);
  say({ event: "churned", heapBefore, heapAfter: heapAfterGc(), watches: next, updates });
  process.exit(0);
}

async function heap(port: string, count: number, kind: Kind): Promise<void> {
  const client = await createClient(port, "GRPC", kind);
  const before = heapAfterGc();
  let received = 0;
  const seen = new Set<number>();
  for (let i = 0; i < count; i++) {
    client.watch(`${kind}-${i}`, () => {
      if (seen.has(i)) return;
      seen.add(i);
      received += 1;
      if (received === count) {
        seen.clear();
        setImmediate(() => {
          const after = heapAfterGc();
          say({ event: "held", bytesPerResource: (after - before) / count, heapAfter: after });
          process.exit(0);
        });
      }
    });
  }
}

const [a, b, c, d] = rest;
if (mode === "cold") await cold();
else if (mode === "first") await first(a!);
else if (mode === "repush") await repush(a!, Number(b), c!);
else if (mode === "churn") await churn(a!, Number(b), Number(c), Number(d));
else if (mode === "heap") await heap(a!, Number(b), c as Kind);
else throw new Error(`unknown mode ${mode}`);
