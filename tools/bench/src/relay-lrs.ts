// Load reports through a relay (issue 33): what forwarding adds to a report's way to the control plane's LRS sink.
// A control plane (its sink timestamps each report as it arrives), a relay forwarding LRS to it, and one client
// process with two LRS streams, one to the control plane and one through the relay, each in a process of its own.
// The client sends a report on each stream in turn, every 10 ms (N per stream), each carrying its index; the delay
// of each is from its send in the client to its arrival in the sink, on the clock the processes share. The added
// delay is the difference of the medians (and of the 90th percentiles). Not a test: nothing asserts on time.
//
//   node tools/bench/dist/relay-lrs.js [--reports 500] [--quick]
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createWritableIterable } from "@connectrpc/connect/protocol";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import {
  LoadReportingService,
  type LoadStatsRequest,
  LoadStatsRequestSchema,
} from "@xdskit/protos/envoy/service/load_stats/v3/lrs_pb";
import { createXdsRelay, type XdsRelay } from "@xdskit/xds-relay";
import { now, Peer, serve } from "./lib/peer-process.js";
import { printTable } from "./lib/table.js";

const SELF = fileURLToPath(import.meta.url);
const INTERVAL_MS = 10;

function runControlPlane(): void {
  let server: ManagementServer | undefined;
  /** Arrival time of each report, by its node and index. */
  const arrived = new Map<string, number>();
  serve(async (message, send) => {
    if (message.type === "start") {
      server = await createManagementServer({ historyLimit: 0 });
      server.lrs.onReport((event) => {
        const at = now();
        for (const stats of event.clusterStats) arrived.set(`${event.nodeId} ${stats.totalDroppedRequests}`, at);
      });
      send({ type: "ready", address: server.address });
    } else if (message.type === "arrivals") {
      send({ type: "arrivals", arrivals: [...arrived] });
    }
  });
}

function runRelay(): void {
  let relay: XdsRelay | undefined;
  serve(async (message, send) => {
    if (message.type === "start") {
      relay = await createXdsRelay({
        historyLimit: 0,
        upstream: {
          bootstrap: {
            xds_servers: [{ server_uri: message.upstream as string, channel_creds: [{ type: "insecure" }] }],
            node: { id: "relay" },
          },
          env: {},
        },
      });
      send({ type: "ready", address: relay.address });
    }
  });
}

/** One LRS stream: its first request introduces the node; `report(i)` sends report i and returns when it was sent. */
function lrsStream(address: string, nodeId: string) {
  const requests = createWritableIterable<LoadStatsRequest>();
  const client = createClient(LoadReportingService, createGrpcTransport({ baseUrl: `http://${address}` }));
  const responses = client.streamLoadStats(requests)[Symbol.asyncIterator]();
  return {
    async open() {
      await requests.write(create(LoadStatsRequestSchema, { node: { id: nodeId } }));
      await responses.next();
    },
    async report(index: number): Promise<number> {
      const request = create(LoadStatsRequestSchema, {
        clusterStats: [
          {
            clusterName: "c",
            totalDroppedRequests: BigInt(index),
            upstreamLocalityStats: [
              { locality: { zone: "z" }, totalSuccessfulRequests: 10n, totalIssuedRequests: 10n },
            ],
          },
        ],
      });
      const at = now();
      await requests.write(request);
      return at;
    },
    close: () => requests.close(),
  };
}

function runClient(): void {
  serve(async (message, send) => {
    if (message.type === "run") {
      const count = message.reports as number;
      const direct = lrsStream(message.direct as string, "direct");
      const relayed = lrsStream(message.relayed as string, "relayed");
      await Promise.all([direct.open(), relayed.open()]);
      const sent: [string, number][] = [];
      for (let i = 1; i <= count; i++) {
        sent.push([`direct ${i}`, await direct.report(i)]);
        await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS / 2));
        sent.push([`relayed ${i}`, await relayed.report(i)]);
        await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS / 2));
      }
      // Let the last reports land.
      await new Promise((resolve) => setTimeout(resolve, 500));
      direct.close();
      relayed.close();
      send({ type: "sent", sent });
    }
  });
}

async function runTop(): Promise<void> {
  const args = process.argv.slice(2);
  const at = args.indexOf("--reports");
  const reports = at >= 0 ? Number(args[at + 1]) : args.includes("--quick") ? 100 : 500;
  const cp = new Peer(SELF, "cp");
  const relay = new Peer(SELF, "relay");
  const client = new Peer(SELF, "client");
  try {
    const { address } = await cp.ask<{ type: string; address: string }>({ type: "start" }, "ready");
    const relayed = await relay.ask<{ type: string; address: string }>({ type: "start", upstream: address }, "ready");
    const { sent } = await client.ask<{ type: string; sent: [string, number][] }>(
      { type: "run", reports, direct: address, relayed: relayed.address },
      "sent",
    );
    const { arrivals } = await cp.ask<{ type: string; arrivals: [string, number][] }>({ type: "arrivals" }, "arrivals");
    const arrivedAt = new Map(arrivals);
    const delays = { direct: [] as number[], relayed: [] as number[] };
    let lost = 0;
    for (const [key, sentAt] of sent) {
      const arrived = arrivedAt.get(key);
      if (arrived === undefined) {
        lost++;
        continue;
      }
      delays[key.startsWith("direct") ? "direct" : "relayed"].push(arrived - sentAt);
    }
    const pick = (list: number[], q: number) => [...list].sort((a, b) => a - b)[Math.floor(list.length * q)] ?? 0;
    const ms = (value: number) => `${value.toFixed(2)} ms`;
    const row = (name: string, list: number[]) => [name, ms(pick(list, 0.5)), ms(pick(list, 0.9)), String(list.length)];
    printTable(
      `LRS through a relay: ${reports} reports per stream, one every ${INTERVAL_MS} ms alternating between a stream to the control plane and one through a relay (each a process); from the send in the client to the arrival in the control plane's sink${lost > 0 ? `; ${lost} not arrived` : ""}`,
      ["path", "p50", "p90", "reports"],
      [
        row("control plane directly", delays.direct),
        row("through the relay", delays.relayed),
        [
          "added by the relay",
          ms(pick(delays.relayed, 0.5) - pick(delays.direct, 0.5)),
          ms(pick(delays.relayed, 0.9) - pick(delays.direct, 0.9)),
          "",
        ],
      ],
    );
  } finally {
    for (const peer of [client, relay, cp]) peer.kill();
  }
}

const roleAt = process.argv.indexOf("--role");
const role = roleAt > 0 ? process.argv[roleAt + 1] : undefined;
if (role === "cp") runControlPlane();
else if (role === "relay") runRelay();
else if (role === "client") runClient();
else await runTop();
