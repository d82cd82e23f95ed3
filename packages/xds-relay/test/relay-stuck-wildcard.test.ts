// A downstream that subscribes by wildcard to 10,000 clusters and never reads (docs/limits.md, "Relay"): the relay
// holds at most one response for it (flow control: the next waits for the connection to take it and for the ACK,
// and changes meanwhile coalesce), bounded by maxQueuedBytesPerStream, while every other client is served.
import * as http2 from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { buildCluster, CDS_TYPE_URL } from "@xdskit/control-plane";
import { DiscoveryRequestSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { clusterResourceType } from "@xdskit/xds-client";
import { afterEach, expect, it } from "vitest";
import { closeAll, edsName, startClient, startRelay, startUpstream, until, watch } from "./support/harness.js";

afterEach(closeAll);

const SOTW_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";

/** A SotW stream that sends one wildcard CDS request and never reads what comes back. */
function stuckWildcard(url: string): { close(): void } {
  const session = http2.connect(url);
  session.on("error", () => {});
  const stream = session.request({
    ":method": "POST",
    ":path": SOTW_PATH,
    "content-type": "application/grpc",
    te: "trailers",
  });
  stream.on("error", () => {});
  stream.pause();
  const message = toBinary(
    DiscoveryRequestSchema,
    create(DiscoveryRequestSchema, { node: { id: "stuck" }, typeUrl: CDS_TYPE_URL, resourceNames: ["*"] }),
  );
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  stream.write(frame);
  return { close: () => session.destroy() };
}

// 10,000 clusters make a response of about 0.4 MB, several times what HTTP/2 flow control lets through to a stream
// that is not read (a 64 KiB window): enough to hold the response; the size of a fleet is tools/bench's.
it("holds one response for a wildcard subscriber of 10,000 clusters that never reads, and serves the others", async () => {
  const count = 10_000;
  const upstream = await startUpstream({ historyLimit: 0 });
  upstream.setResources(Array.from({ length: count }, (_, i) => buildCluster({ name: `c${i}` })));
  const relay = await startRelay(upstream.address, { upstreamApi: "DELTA_GRPC", historyLimit: 0 });
  const stuck = stuckWildcard(relay.url);
  const stuckInfo = () => relay.streams().find((s) => s.node?.id === "stuck");
  // Its first response (every cluster) is written and waits for the connection to take it.
  await until(relay.hooks, () => stuckInfo()?.types[0]?.waitingFor === "write", 15_000);
  const queued = stuckInfo()?.queuedBytes ?? 0;
  expect(queued).toBeGreaterThan(count * 10);
  expect(relay.stats().names).toBe(count);

  // Changes keep coming: another client is served each, the stuck one gets nothing more queued.
  const good = watch(startClient(relay.address, "good"), clusterResourceType, "c7");
  expect(edsName(await good.nextResource(10_000))).toBe("");
  for (let i = 1; i <= 3; i++) {
    upstream.setResource(buildCluster({ name: "c7", edsServiceName: `v${i}` }));
    expect(edsName(await good.nextResource(10_000))).toBe(`v${i}`);
  }
  const after = stuckInfo()?.types[0];
  expect(after?.waitingFor).toBe("write");
  expect(after?.pending).toBe(true);
  // Nothing more than that one response is held for it (a few bytes of frame headers aside).
  expect(stuckInfo()?.queuedBytes).toBeLessThanOrEqual(queued);
  stuck.close();
  await until(relay.hooks, () => stuckInfo() === undefined);
}, 60_000);
