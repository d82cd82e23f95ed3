// Child process of connect-xds-server.ts: one echo server on 127.0.0.1 (port 0) answering the bench echo service's
// unary method with `<value>`, so the CPU this process reports is the server's alone.
// `node xds-server-worker.js <plain|xds|xds-adapter> <cleartext|mtls> <json>`, the JSON holding `controlPlane` (the
// control plane's address, xds kinds) and the PEM file paths `certFile`, `keyFile`, `caFile` (mtls):
// - plain: connect-node's connectNodeAdapter on node:http2 (createServer, or createSecureServer asking for and
//   verifying client certificates);
// - xds: @xdskit/connect-xds-server's createXdsServer with the same routes, its TLS from a file_watcher certificate
//   provider instance "pki" over the same files; the benchmark's control plane pushes its Listener;
// - xds-adapter: the same with `leanGrpc: false` (every call through connectNodeAdapter).
// Sends `{ port, name }` over IPC once bound (`name`: the Listener resource it watches), `{ serving: true }` when the
// xDS server first serves, answers "cpu" with `{ cpuUs }` (its CPU time so far, microseconds), and exits when the
// parent disconnects.
import { readFileSync } from "node:fs";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { createXdsServer } from "@xdskit/connect-xds-server";
import type { BootstrapConfig } from "@xdskit/xds-client";
import { EchoService } from "../lib/echo-service.js";

const kind = process.argv[2] ?? "plain";
const security = process.argv[3] ?? "cleartext";
const config = JSON.parse(process.argv[4] ?? "{}") as {
  controlPlane?: string;
  certFile?: string;
  keyFile?: string;
  caFile?: string;
};

const LISTENER_TEMPLATE = "grpc/server?xds.resource.listening_address=%s";

const routes = (router: ConnectRouter) => {
  router.service(EchoService, {
    unary: (request: { value: string }) => create(StringValueSchema, { value: request.value }),
  } as never);
};

async function startPlain(): Promise<void> {
  const handler = connectNodeAdapter({ routes });
  const server =
    security === "mtls"
      ? http2.createSecureServer(
          {
            cert: readFileSync(config.certFile!),
            key: readFileSync(config.keyFile!),
            ca: readFileSync(config.caFile!),
            requestCert: true,
            rejectUnauthorized: true,
            ALPNProtocols: ["h2"],
          },
          handler,
        )
      : http2.createServer(handler);
  server.on("session", (session) => session.on("error", () => {}));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  process.send?.({ port: (server.address() as AddressInfo).port, name: "" });
}

async function startXds(): Promise<void> {
  const server = createXdsServer({
    routes,
    // "xds-adapter": every call through connectNodeAdapter, as before the lean path (its own cost beside plain).
    ...(kind === "xds-adapter" ? { leanGrpc: false } : {}),
    bootstrap: {
      xds_servers: [{ server_uri: config.controlPlane!, channel_creds: [{ type: "insecure" }] }],
      node: { id: "bench-server" },
      server_listener_resource_name_template: LISTENER_TEMPLATE,
      certificate_providers: {
        pki: {
          plugin_name: "file_watcher",
          config: {
            certificate_file: config.certFile,
            private_key_file: config.keyFile,
            ca_certificate_file: config.caFile,
          },
        },
      },
    } as unknown as BootstrapConfig,
    onServingStatus: (status) => {
      if (status.serving) process.send?.({ serving: true });
    },
  });
  const bound = await server.listen({ host: "127.0.0.1", port: 0 });
  process.send?.({ port: bound.port, name: server.listenerResourceName });
}

process.on("message", (message) => {
  if (message === "cpu") {
    const used = process.cpuUsage();
    process.send?.({ cpuUs: used.user + used.system });
  }
});
process.on("disconnect", () => process.exit(0));
await (kind === "plain" ? startPlain() : startXds());
