// The xds-client core beside @grpc/grpc-js-xds, in one run against one @xdskit/control-plane on 127.0.0.1:
//   1. N `watch` calls in one tick: how long the calls take, how many requests and names reach the server;
//   2. N watched resources delivered: from the server sending the (held) responses to the last watcher callback;
// and the peak RSS of each client's process. Each client runs alone in a child process.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { createManagementServer } from "@xdskit/control-plane";
import { ClusterLoadAssignmentSchema } from "@xdskit/protos/envoy/config/endpoint/v3/endpoint_pb";
import { int, printTable, ratio } from "./lib/table.js";

const EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
const COUNT = Number(process.env.XDSKIT_BENCH_WATCHES ?? 10_000);
const worker = join(dirname(fileURLToPath(import.meta.url)), "workers", "xds-client-worker.js");
const now = () => performance.timeOrigin + performance.now();

function endpoints(i: number) {
  return create(ClusterLoadAssignmentSchema, {
    clusterName: `cluster-${i}`,
    endpoints: [
      {
        locality: { region: "r", zone: `z${i % 3}` },
        loadBalancingWeight: 1,
        lbEndpoints: [
          {
            hostIdentifier: {
              case: "endpoint",
              value: {
                address: {
                  address: {
                    case: "socketAddress",
                    value: {
                      address: `10.${(i >> 8) & 255}.${i & 255}.1`,
                      portSpecifier: { case: "portValue", value: 8080 },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    ],
  });
}

interface Result {
  readonly watchMs: number;
  readonly requests: number;
  readonly namesSent: number;
  readonly subscribedMs: number;
  readonly deliverMs: number;
  readonly peakRssMb: number;
}

async function measure(which: "xdskit" | "grpc-js-xds"): Promise<Result> {
  const server = await createManagementServer({ host: "127.0.0.1", port: 0, historyLimit: 1_000_000 });
  try {
    server.setResources(Array.from({ length: COUNT }, (_, i) => endpoints(i)));
    server.hooks.hold({ typeUrl: EDS });
    let requests = 0;
    let namesSent = 0;
    let allSubscribedAt = 0;
    let subscribed!: () => void;
    const allSubscribed = new Promise<void>((resolve) => {
      subscribed = resolve;
    });
    server.hooks.on("request", (event) => {
      if (event.typeUrl !== EDS || event.kind !== "sotw") return;
      requests += 1;
      namesSent += event.resourceNames.length;
      if (event.resourceNames.length === COUNT && allSubscribedAt === 0) {
        allSubscribedAt = now();
        subscribed();
      }
    });
    const child = spawn(process.execPath, [worker, which, String(server.port), String(COUNT)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const events: Record<string, { t: number; start?: number; maxRssKb?: number }> = {};
    let buffered = "";
    const finished = new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        buffered += chunk.toString();
        let nl = buffered.indexOf("\n");
        while (nl >= 0) {
          const line = JSON.parse(buffered.slice(0, nl));
          events[line.event] = line;
          buffered = buffered.slice(nl + 1);
          nl = buffered.indexOf("\n");
        }
      });
      child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${which} worker exited with ${code}`))));
    });
    await allSubscribed;
    // Let any trailing requests arrive, then send the held responses.
    await new Promise((r) => setTimeout(r, 200));
    const releasedAt = now();
    server.hooks.release({ typeUrl: EDS });
    await finished;
    const watched = events.watched!;
    const done = events.done!;
    return {
      watchMs: watched.t - watched.start!,
      requests,
      namesSent,
      subscribedMs: allSubscribedAt - watched.start!,
      deliverMs: done.t - releasedAt,
      peakRssMb: (done.maxRssKb ?? 0) / 1024,
    };
  } finally {
    await server.close();
  }
}

const ours = await measure("xdskit");
const theirs = await measure("grpc-js-xds");
const ms = (n: number) => n.toFixed(1);
const row = (label: string, a: number, b: number, format: (n: number) => string) => [
  label,
  format(a),
  format(b),
  ratio(b / a),
];
printTable(
  `xds-client core vs @grpc/grpc-js-xds 1.14.1: ${int(COUNT)} EDS watches against @xdskit/control-plane on 127.0.0.1`,
  ["measure", "@xdskit/xds-client", "@grpc/grpc-js-xds", "grpc-js-xds / xdskit"],
  [
    row(`${int(COUNT)} watch() calls in one tick (ms)`, ours.watchMs, theirs.watchMs, ms),
    row("requests the server received", ours.requests, theirs.requests, int),
    row("resource names in those requests", ours.namesSent, theirs.namesSent, int),
    row("first watch to every name subscribed (ms)", ours.subscribedMs, theirs.subscribedMs, ms),
    row(`responses released to last of ${int(COUNT)} callbacks (ms)`, ours.deliverMs, theirs.deliverMs, ms),
    row("peak RSS of the client process (MiB)", ours.peakRssMb, theirs.peakRssMb, ms),
  ],
);
