// `npm run server [-- --port N]`: HelloService on an xDS-enabled Connect server. It takes everything but its
// handlers from the xDS server: the Listener for 127.0.0.1:<port> (serve/server-listener.yaml) gives the TLS (mTLS
// with the `mesh` certificates) and the RBAC policy; until that Listener arrives it accepts no call.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { createXdsServer } from "@xdskit/connect-xds-server";
import { HelloResponseSchema, HelloService } from "./gen/mesh/v1/hello_pb.js";

const { values } = parseArgs({ options: { port: { type: "string", default: "50061" } } });
const server = createXdsServer({
  bootstrap: readFileSync("certs/server-bootstrap.json", "utf8"),
  routes: (router) =>
    router.service(HelloService, {
      hello: (request) => create(HelloResponseSchema, { message: `Hello, ${request.name}!` }),
    }),
  onServingStatus: (status) =>
    process.stdout.write(status.serving ? "serving\n" : `not serving: ${status.reason ?? "no configuration"}\n`),
});
const bound = await server.listen({ host: "127.0.0.1", port: Number(values.port) });
process.stdout.write(`hello-server listening on 127.0.0.1:${bound.port}; Ctrl-C to stop\n`);
process.once("SIGINT", () => {
  void server.close().then(() => process.stdout.write("stopped\n"));
});
