// `npm run client`: calls the Greeter service through xds:///greeter. The transport asks the xDS server (here
// `xdskit serve` on ./serve) for the listener `greeter`, follows it to its routes, the routes' weighted clusters
// and their endpoints, and routes every call itself: about 80 % to cluster greeter (backends a and b, one per
// zone), 20 % to greeter-canary (backend c). It then counts who answered.
//   node dist/main.js [--xds 127.0.0.1:18000] [--calls 100]
import { parseArgs } from "node:util";
import { createClient } from "@connectrpc/connect";
import { createXdsTransport } from "@xdskit/connect-xds";
import { GreeterService } from "./gen/greeter/v1/greeter_pb.js";

const { values } = parseArgs({
  options: { xds: { type: "string", default: "127.0.0.1:18000" }, calls: { type: "string", default: "100" } },
});
const calls = Number(values.calls);

// The gRPC xDS bootstrap: which xDS server to ask and who this client is (the node). A file named by
// GRPC_XDS_BOOTSTRAP works the same way; without `bootstrap`, the transport reads that variable.
const transport = createXdsTransport({
  target: "xds:///greeter",
  bootstrap: {
    xds_servers: [{ server_uri: values.xds, channel_creds: [{ type: "insecure" }] }],
    node: { id: "greeter-client", locality: { zone: "a" } },
  },
});
const greeter = createClient(GreeterService, transport);

const answered = new Map<string, number>();
let failed = 0;
for (let i = 0; i < calls; i++) {
  try {
    // A deadline as any gRPC call should have: the first call also waits for the xDS configuration.
    const response = await greeter.sayHello({ name: "mesh" }, { timeoutMs: 5_000 });
    if (i === 0) process.stdout.write(`${response.message} (from ${response.backend}, zone ${response.zone})\n`);
    const key = `${response.backend} (zone ${response.zone})`;
    answered.set(key, (answered.get(key) ?? 0) + 1);
  } catch (error) {
    failed++;
    if (failed === 1) process.stderr.write(`call ${i + 1} failed: ${(error as Error).message}\n`);
  }
}
process.stdout.write(`${calls} calls through xds:///greeter, ${failed} failed; answered by:\n`);
for (const [backend, count] of [...answered].sort(([a], [b]) => a.localeCompare(b))) {
  process.stdout.write(
    `  ${backend.padEnd(20)} ${String(count).padStart(4)}  ${((100 * count) / calls).toFixed(0)} %\n`,
  );
}
// Closing sends the load the transport counted to the clusters' LRS server (`lrs_server: self`: xdskit serve).
await transport.close();
process.exitCode = failed > 0 ? 1 : 0;
