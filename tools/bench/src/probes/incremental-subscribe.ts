// What one more subscription costs a delta stream that already has many: an @xdskit/xds-client on delta ADS adds
// watches one at a time (each waiting for its cluster) against an @xdskit/control-plane in this process, as a cold
// relay's upstream client does while its clients arrive. Prints the microseconds per added watch (request, response,
// ACK) for each tenth of the run: flat when a subscription change costs the change, rising when it costs every name
// already subscribed (the client building its request, the server re-indexing the stream). Not a benchmark with a
// peer: grpc-js-xds has no delta ADS, and its SotW requests list every name by protocol.
//
//   node tools/bench/dist/probes/incremental-subscribe.js [watches=5000]
import { buildCluster, createManagementServer } from "@xdskit/control-plane";
import { clusterResourceType, createXdsClient } from "@xdskit/xds-client";

const watches = Number(process.argv[2] ?? 5_000);
const tenth = Math.max(1, Math.floor(watches / 10));
const server = await createManagementServer({ historyLimit: 0 });
server.setResources(Array.from({ length: watches }, (_, i) => buildCluster({ name: `cluster-${i}` })));
const client = createXdsClient({
  bootstrap: {
    xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }], api_type: "DELTA_GRPC" }],
    node: { id: "probe" },
  },
  env: {},
});
const perTenth: number[] = [];
let start = performance.now();
for (let i = 0; i < watches; i++) {
  await new Promise<void>((resolve, reject) => {
    client.watch(clusterResourceType, `cluster-${i}`, {
      onResourceChanged: (result) => (result.ok ? resolve() : reject(result.error)),
      onAmbientError: () => {},
    });
  });
  if ((i + 1) % tenth === 0) {
    const now = performance.now();
    perTenth.push(Math.round(((now - start) / tenth) * 1000));
    start = now;
  }
}
console.log(`microseconds per added watch, by tenth of ${watches}: ${perTenth.join(" ")}`);
await client.close();
await server.close();
