// End to end over real HTTP/2: the control plane on 127.0.0.1 serves LDS -> RDS -> CDS -> EDS, Connect backends
// answer with their names, and a Connect client on createXdsTransport calls them with every kind of method.
import { create } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { LDS_TYPE_URL, type ManagementServer } from "@xdskit/control-plane";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { EchoService } from "./support/echo-service.js";
import { clientFor, NODE_ID, simpleSnapshot, startControlPlane } from "./support/harness.js";

type Echo = {
  unary(request: { value: string }, options?: object): Promise<{ value: string }>;
  serverStream(request: { value: string }): AsyncIterable<{ value: string }>;
  clientStream(requests: AsyncIterable<{ value: string }>): Promise<{ value: string }>;
  bidiStream(requests: AsyncIterable<{ value: string }>): AsyncIterable<{ value: string }>;
};

async function* values(...items: string[]) {
  for (const value of items) yield create(StringValueSchema, { value });
}

describe("createXdsTransport", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let backends: Backend[];
  let transport: XdsTransport;
  let echo: Echo;

  beforeAll(async () => {
    server = await startControlPlane();
    backends = await Promise.all([startBackend("a"), startBackend("b")]);
    server.setSnapshot(
      simpleSnapshot("echo", "echo-cluster", [{ zone: "z1", endpoints: backends.map((b) => b.address) }]),
    );
    client = clientFor(server);
    transport = createXdsTransport({ target: "xds:///echo", client });
    echo = createClient(EchoService, transport) as unknown as Echo;
  });

  afterAll(async () => {
    await transport.close();
    await client.close();
    await Promise.all(backends.map((b) => b.close()));
    await server.close();
  });

  it("routes unary calls round robin over the cluster's endpoints", async () => {
    const served = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const response = await echo.unary({ value: `m${i}` });
      expect(response.value).toMatch(new RegExp(`^[ab]:m${i}$`));
      served.add(response.value.split(":")[0]!);
    }
    expect([...served].sort()).toEqual(["a", "b"]);
  });

  it("carries server, client and bidi streams", async () => {
    const streamed: string[] = [];
    for await (const message of echo.serverStream({ value: "s" })) streamed.push(message.value);
    expect(streamed).toHaveLength(3);
    expect(streamed[0]).toMatch(/^[ab]:s:0$/);
    const joined = await echo.clientStream(values("x", "y", "z"));
    expect(joined.value).toMatch(/^[ab]:x,y,z$/);
    const echoed: string[] = [];
    for await (const message of echo.bidiStream(values("p", "q"))) echoed.push(message.value);
    expect(echoed.map((v) => v.split(":")[1])).toEqual(["p", "q"]);
  });

  it("fails a call to a target whose listener does not exist with UNAVAILABLE naming it and the node", async () => {
    // TP3: the server says NOT_FOUND at once (instead of the client's 15 s does-not-exist timer).
    server.setResourceError(LDS_TYPE_URL, "nothing-here", { code: Code.NotFound, message: "no such listener" });
    const missing = createXdsTransport({ target: "xds:///nothing-here", client });
    try {
      const error = await (createClient(EchoService, missing) as unknown as Echo).unary({ value: "x" }).then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(error?.code).toBe(Code.Unavailable);
      // The node ID once, the type and name of the missing resource, the server's word.
      expect(error?.rawMessage).toBe(
        `xDS Listener "nothing-here" does not exist (server: no such listener) (xDS node ID "${NODE_ID}")`,
      );
    } finally {
      await missing.close();
    }
  });
});
