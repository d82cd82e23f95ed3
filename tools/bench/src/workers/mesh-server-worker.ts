// Child process of mesh-mtls.ts: an xDS-enabled server answering the echo service's unary method with
// `<impl>:<value>`, configured by the control plane (its Listener gives it mTLS): `@xdskit/connect-xds-server`'s
// createXdsServer, or `@grpc/grpc-js-xds`'s XdsServer with XdsServerCredentials over an insecure fallback.
// `node mesh-server-worker.js <xdskit|grpc-js-xds> <bootstrap JSON>`. Sends `{ port, listenerName }` over IPC once
// bound, `{ serving: true }` once it serves, answers "cpu" with `{ cpuUs }`, and exits when the parent disconnects.
import { createServer } from "node:net";
import { create } from "@bufbuild/protobuf";
import { type StringValue, StringValueSchema } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import * as grpcJsXds from "@grpc/grpc-js-xds";
import { createXdsServer } from "@xdskit/connect-xds-server";
import { deserializeText, ECHO_PATH, EchoService, serializeText } from "../lib/echo-service.js";

const implementation = process.argv[2] ?? "xdskit";
const bootstrap = JSON.parse(process.argv[3] ?? "{}") as Record<string, unknown>;
const TEMPLATE = "grpc/server?xds.resource.listening_address=%s";
const send = (message: object) => process.send?.(message);

process.on("message", (message) => {
  if (message === "cpu") {
    const used = process.cpuUsage();
    send({ cpuUs: used.user + used.system });
  }
});
process.on("disconnect", () => process.exit(0));

if (implementation === "xdskit") {
  const server = createXdsServer({
    routes: (router) =>
      router.service(EchoService, {
        unary: (request: StringValue) => create(StringValueSchema, { value: `xdskit:${request.value}` }),
      } as never),
    bootstrap: bootstrap as never,
    onServingStatus: ({ serving }) => {
      if (serving) send({ serving: true });
    },
  });
  const bound = await server.listen({ host: "127.0.0.1", port: 0 });
  send({ port: bound.port, listenerName: server.listenerResourceName });
} else {
  // XdsServer refuses port 0: a free port of 127.0.0.1 first.
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
  // The HTTP filters (the router among them) are registered by register(), for servers too.
  grpcJsXds.register();
  const server = new grpcJsXds.XdsServer({
    "grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config": JSON.stringify(bootstrap),
  });
  server.addService(
    {
      Unary: {
        path: ECHO_PATH,
        requestStream: false,
        responseStream: false,
        requestSerialize: (value: StringValue) => serializeText(value.value),
        requestDeserialize: deserializeText,
        responseSerialize: (value: StringValue) => serializeText(value.value),
        responseDeserialize: deserializeText,
      },
    },
    {
      Unary: (call: grpc.ServerUnaryCall<StringValue, StringValue>, callback: grpc.sendUnaryData<StringValue>) =>
        callback(null, create(StringValueSchema, { value: `grpc-js-xds:${call.request.value}` })),
    },
  );
  const address = `127.0.0.1:${port}`;
  server.bindAsync(address, new grpcJsXds.XdsServerCredentials(grpc.ServerCredentials.createInsecure()), (error) => {
    if (error === null) send({ serving: true });
  });
  send({ port, listenerName: TEMPLATE.replace("%s", address) });
}
