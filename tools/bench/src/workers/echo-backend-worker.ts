// Child process of connect-xds-calls.ts: a connect-node backend on 127.0.0.1 (port 0) answering the echo service
// with its name. Sends its port over IPC; exits when the parent disconnects.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { EchoService } from "../lib/echo-service.js";

const name = process.argv[2] ?? "backend";
const server = http2.createServer(
  connectNodeAdapter({
    routes: (router) => {
      router.service(EchoService, {
        unary: (request: { value: string }) => create(StringValueSchema, { value: `${name}:${request.value}` }),
      } as never);
    },
  }),
);
server.on("session", (session) => session.on("error", () => {}));
server.listen(0, "127.0.0.1", () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
process.on("disconnect", () => process.exit(0));
