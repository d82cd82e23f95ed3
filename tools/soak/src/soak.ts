// Soak: @xdskit/control-plane restarted ROUNDS times under WATCHES watches per client (one state-of-the-world client,
// one delta client; a quarter of the watches on each of LDS, RDS, CDS and EDS), every resource changed around each
// restart. Not a test: run it with `pnpm --filter @xdskit/soak soak` (XDSKIT_SOAK_ROUNDS, XDSKIT_SOAK_WATCHES).
// XDSKIT_SOAK_MODE=relay puts an @xdskit/xds-relay between the control plane and the clients, and restarts the
// control plane and the relay (a new one, empty cache, same port) in turn; a watcher then must also never be given
// a resource it already has (watchers implement onAmbientErrorCleared, so a recovery is not a re-delivery).
//
// Each resource carries the round it was written in (LDS: the RDS name it points at, RDS: the virtual host name,
// CDS: the EDS service name, EDS: the endpoint's port). Steps: (1) serve round 0, create the clients, watch
// everything, wait until every watcher has round 0, then collect garbage and take the heap; (2) per round: stop the
// control plane, change half of the resources while it is down, start it, change the other half, and wait until
// every watcher has the new round; (3) collect garbage, take the heap again, print the figures. It fails (exit 1)
// on any spurious error (a watcher losing its resource to an error, or an ambient error that is not the control
// plane being down), on any lost or out-of-order update, and when the heap grew by more than HEAP_SLACK.
import { setTimeout as sleep } from "node:timers/promises";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  buildRouteConfiguration,
  createManagementServer,
  type ManagementServer,
  type ResourceMessage,
} from "@xdskit/control-plane";
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
import { createXdsRelay, type XdsRelay } from "@xdskit/xds-relay";

function intEnv(name: string, fallback: number): number {
  const text = process.env[name];
  const value = text === undefined || text === "" ? fallback : Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${text}"`);
  return value;
}

const ROUNDS = intEnv("XDSKIT_SOAK_ROUNDS", 100);
const MODE = process.env.XDSKIT_SOAK_MODE === "relay" ? "relay" : "direct";
const WATCHES = intEnv("XDSKIT_SOAK_WATCHES", 1000);
const PER_TYPE = Math.ceil(WATCHES / 4);
/** How long one round may take before its missing updates count as lost. */
const ROUND_TIMEOUT_MS = 60_000;
/** Allowed heap growth between the first and the last measurement (after GC): 25% plus 16 MiB. */
const HEAP_SLACK = { ratio: 1.25, bytes: 16 << 20 };
const BASE_PORT = 10_000;

interface Kind {
  readonly label: string;
  readonly type: ResourceType<unknown>;
  name(i: number): string;
  resource(i: number, round: number): ResourceMessage;
  roundOf(update: unknown): number;
}

const roundSuffix = (text: string) => Number(text.slice(text.lastIndexOf("@") + 1));

const KINDS: readonly Kind[] = [
  {
    label: "LDS",
    type: listenerResourceType as ResourceType<unknown>,
    name: (i) => `l-${i}`,
    resource: (i, round) => buildListener({ name: `l-${i}`, routeConfigName: `r-${i}@${round}` }),
    roundOf: (update) => {
      const listener = update as ListenerUpdate;
      if (listener.kind !== "client") return Number.NaN;
      return listener.route.type === "rds" ? roundSuffix(listener.route.routeConfigName) : Number.NaN;
    },
  },
  {
    label: "RDS",
    type: routeConfigurationResourceType as ResourceType<unknown>,
    name: (i) => `r-${i}`,
    resource: (i, round) =>
      buildRouteConfiguration({ name: `r-${i}`, cluster: `c-${i}`, virtualHostName: `vh@${round}` }),
    roundOf: (update) => roundSuffix((update as RouteConfigurationUpdate).virtualHosts[0]?.name ?? ""),
  },
  {
    label: "CDS",
    type: clusterResourceType as ResourceType<unknown>,
    name: (i) => `c-${i}`,
    resource: (i, round) => buildCluster({ name: `c-${i}`, edsServiceName: `e-${i}@${round}` }),
    roundOf: (update) => {
      const cluster = update as ClusterUpdate;
      return cluster.type === "eds" ? roundSuffix(cluster.edsServiceName) : Number.NaN;
    },
  },
  {
    label: "EDS",
    type: endpointResourceType as ResourceType<unknown>,
    name: (i) => `e-${i}`,
    resource: (i, round) =>
      buildClusterLoadAssignment({
        clusterName: `e-${i}`,
        localities: [{ zone: "z", endpoints: [{ address: `10.0.${i >> 8}.${i & 255}`, port: BASE_PORT + round }] }],
      }),
    roundOf: (update) =>
      ((update as EndpointUpdate).priorities[0]?.localities[0]?.endpoints[0]?.addresses[0]?.port ?? 0) - BASE_PORT,
  },
];

interface ClientFigures {
  updates: number;
  connectionErrors: number;
  spuriousErrors: string[];
  outOfOrder: string[];
  /** Relay mode: a resource delivered again at the round the watcher already had. */
  repeated: string[];
}

interface SoakClient {
  readonly label: string;
  readonly client: XdsClient;
  readonly figures: ClientFigures;
  /** The round each watch has, by watch key. */
  readonly rounds: Map<string, number>;
}

let target = 0;
let behind = 0;
let onCaughtUp: (() => void) | undefined;

function resourcesOf(round: number, keep: (i: number) => boolean): ResourceMessage[] {
  const out: ResourceMessage[] = [];
  for (const kind of KINDS) for (let i = 0; i < PER_TYPE; i++) if (keep(i)) out.push(kind.resource(i, round));
  return out;
}

function isControlPlaneDown(error: XdsError): boolean {
  return error.kind === "connection" && error.message.startsWith("[UNAVAILABLE]");
}

function startClient(server: { readonly address: string }, api: "GRPC" | "DELTA_GRPC"): SoakClient {
  const label = api === "GRPC" ? "sotw" : "delta";
  const figures: ClientFigures = { updates: 0, connectionErrors: 0, spuriousErrors: [], outOfOrder: [], repeated: [] };
  const rounds = new Map<string, number>();
  const client = createXdsClient({
    bootstrap: {
      xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: api }],
      node: { id: `soak-${label}` },
    },
    env: {},
  });
  const under: SoakClient = { label, client, figures, rounds };
  for (const kind of KINDS) {
    for (let i = 0; i < PER_TYPE; i++) {
      const key = `${kind.label} ${kind.name(i)}`;
      client.watch(kind.type, kind.name(i), {
        onResourceChanged(result) {
          if (!result.ok) {
            figures.spuriousErrors.push(`${key}: ${result.error.message}`);
            return;
          }
          figures.updates++;
          const round = kind.roundOf(result.resource);
          const previous = rounds.get(key);
          if (previous !== undefined && !(round >= previous)) {
            figures.outOfOrder.push(`${key}: round ${round} after ${previous}`);
          }
          if (MODE === "relay" && round === previous) figures.repeated.push(`${key}: round ${round} again`);
          rounds.set(key, round);
          if (round === target && previous !== target) {
            behind--;
            if (behind === 0) onCaughtUp?.();
          }
        },
        onAmbientError(error) {
          if (isControlPlaneDown(error)) figures.connectionErrors++;
          else figures.spuriousErrors.push(`${key} (ambient): ${error.message}`);
        },
        ...(MODE === "relay" ? { onAmbientErrorCleared() {} } : {}),
      });
    }
  }
  return under;
}

/** Resolves when every watch of every client has round `round`; rejects after ROUND_TIMEOUT_MS. */
async function allAt(clients: readonly SoakClient[], round: number): Promise<void> {
  if (behind === 0) return;
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      onCaughtUp = resolve;
      timer = setTimeout(() => {
        const missing = clients.flatMap((c) =>
          [...c.rounds].filter(([, r]) => r !== round).map(([key, r]) => `${c.label} ${key} at ${r}`),
        );
        reject(new Error(`round ${round}: ${behind} updates lost, e.g. ${missing.slice(0, 5).join("; ")}`));
      }, ROUND_TIMEOUT_MS);
    });
  } finally {
    clearTimeout(timer);
    onCaughtUp = undefined;
  }
}

function startRound(clients: readonly SoakClient[], round: number): void {
  target = round;
  behind = clients.length * KINDS.length * PER_TYPE;
  for (const c of clients) for (const r of c.rounds.values()) if (r === round) behind--;
}

async function heapAfterGc(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("run with --expose-gc (the soak script does)");
  // Let pending callbacks and sockets settle, then collect twice (finalizers free more on the second pass).
  await sleep(100);
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const mib = (bytes: number) => `${(bytes / (1 << 20)).toFixed(1)} MiB`;

/** Relay mode: a relay (a new one each time: an empty cache) fed by the control plane, on `port`. */
function startRelay(server: ManagementServer, port: number): Promise<XdsRelay> {
  return createXdsRelay({
    port,
    historyLimit: 0,
    upstream: {
      bootstrap: {
        xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: "DELTA_GRPC" }],
        node: { id: "soak-relay" },
      },
      env: {},
    },
  });
}

async function main(): Promise<void> {
  const server = await createManagementServer({
    host: "127.0.0.1",
    port: 0,
    historyLimit: 0,
    contentVersions: MODE === "relay",
  });
  server.setResources(resourcesOf(0, () => true));
  let relay = MODE === "relay" ? await startRelay(server, 0) : undefined;
  const servedBy = relay ?? server;
  const clients = [startClient(servedBy, "GRPC"), startClient(servedBy, "DELTA_GRPC")];
  startRound(clients, 0);
  await allAt(clients, 0);
  const heapBefore = await heapAfterGc();
  const heapSamples = [heapBefore];
  const started = performance.now();
  let failure: unknown;
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      startRound(clients, round);
      if (relay !== undefined && round % 2 === 0) {
        // The relay restarts: a new one on the same port, with nothing cached.
        const port = relay.port;
        await relay.close();
        server.setResources(resourcesOf(round, (i) => i % 2 === 0));
        relay = await startRelay(server, port);
      } else {
        await server.stop();
        server.setResources(resourcesOf(round, (i) => i % 2 === 0));
        await server.start();
      }
      server.setResources(resourcesOf(round, (i) => i % 2 === 1));
      await allAt(clients, round);
      if (round % 10 === 0) heapSamples.push(await heapAfterGc());
    }
  } catch (error) {
    failure = error;
  }
  const elapsedMs = performance.now() - started;
  const heapAfter = await heapAfterGc();
  await Promise.all(clients.map((c) => c.client.close()));
  await relay?.close();
  await server.close();

  const problems: string[] = [];
  if (failure !== undefined) problems.push(String((failure as Error).message ?? failure));
  for (const c of clients) {
    const f = c.figures;
    if (f.spuriousErrors.length > 0)
      problems.push(`${c.label}: ${f.spuriousErrors.length} spurious errors, e.g. ${f.spuriousErrors[0]}`);
    if (f.outOfOrder.length > 0)
      problems.push(`${c.label}: ${f.outOfOrder.length} out-of-order updates, e.g. ${f.outOfOrder[0]}`);
    if (f.repeated.length > 0)
      problems.push(`${c.label}: ${f.repeated.length} repeated updates, e.g. ${f.repeated[0]}`);
    const stale = [...c.rounds.values()].filter((r) => r !== ROUNDS).length;
    if (failure === undefined && stale > 0) problems.push(`${c.label}: ${stale} watches do not end at round ${ROUNDS}`);
  }
  const heapLimit = heapBefore * HEAP_SLACK.ratio + HEAP_SLACK.bytes;
  if (heapAfter > heapLimit)
    problems.push(`heap grew from ${mib(heapBefore)} to ${mib(heapAfter)} (limit ${mib(heapLimit)})`);

  const lines = [
    MODE === "relay"
      ? `soak (relay mode): ${Math.ceil(ROUNDS / 2)} control-plane and ${Math.floor(ROUNDS / 2)} relay restarts, clients behind the relay, ${PER_TYPE * KINDS.length} watches per client (${PER_TYPE} each of LDS, RDS, CDS, EDS), every resource changed each round`
      : `soak: ${ROUNDS} control-plane restarts, ${PER_TYPE * KINDS.length} watches per client (${PER_TYPE} each of LDS, RDS, CDS, EDS), every resource changed each round`,
    ...clients.map(
      (c) =>
        `  ${c.label.padEnd(5)} updates ${c.figures.updates}, spurious errors ${c.figures.spuriousErrors.length}, out-of-order ${c.figures.outOfOrder.length}, lost ${[...c.rounds.values()].filter((r) => r !== ROUNDS).length}, ${MODE === "relay" ? `repeated ${c.figures.repeated.length}, ` : ""}ambient "${MODE === "relay" ? "relay" : "control plane"} down" errors ${c.figures.connectionErrors}`,
    ),
    `  heap after GC: ${mib(heapBefore)} before, ${mib(heapAfter)} after; every 10 rounds: ${heapSamples.map(mib).join(", ")}`,
    `  peak RSS ${mib(process.resourceUsage().maxRSS * 1024)}; ${(elapsedMs / 1000).toFixed(1)} s (${(elapsedMs / ROUNDS).toFixed(0)} ms per round); node ${process.version}`,
    problems.length === 0
      ? "  OK: nothing lost, no spurious error, heap bounded"
      : `  FAILED:\n    ${problems.join("\n    ")}`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}

await main();
