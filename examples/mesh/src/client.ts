// `npm run client`: two calls through xds:///hello. The transport takes the route, the cluster, its endpoints and
// its TLS (mTLS with the `mesh` certificates, the server's SPIFFE ID checked) from the xDS server; the server's RBAC
// policy denies callers that say they are mallory.
import { readFileSync } from "node:fs";
import { ConnectError, createClient } from "@connectrpc/connect";
import { createXdsTransport } from "@xdskit/connect-xds";
import { HelloService } from "./gen/mesh/v1/hello_pb.js";

const transport = createXdsTransport({
  target: "xds:///hello",
  bootstrap: JSON.parse(readFileSync("certs/client-bootstrap.json", "utf8")),
});
const hello = createClient(HelloService, transport);
let failed = false;
for (const user of ["alice", "mallory"]) {
  try {
    const response = await hello.hello({ name: user }, { headers: { "x-user": user }, timeoutMs: 10_000 });
    process.stdout.write(`${user}: ${response.message}\n`);
  } catch (error) {
    const e = ConnectError.from(error);
    process.stdout.write(`${user}: ${e.message}\n`);
    failed ||= user === "alice";
  }
}
await transport.close();
process.exitCode = failed ? 1 : 0;
