import * as http2 from "node:http2";
import * as net from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, test } from "vitest";
import { buildCluster, CDS_TYPE_URL, createManagementServer } from "../src/index.js";
import { createHarness } from "./ads-client.js";
import { namesOf, subscribe } from "./util.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function started(options: Parameters<typeof createManagementServer>[0] = {}) {
  const server = await createManagementServer(options);
  const h = createHarness(server.url);
  cleanups.push(
    () => server.close(),
    () => h.cleanup(),
  );
  server.setResource(buildCluster({ name: "c1" }));
  return { server, h };
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

describe("listening", () => {
  test("port 0 picks an ephemeral port; url and address name it", async () => {
    const { server } = await started();
    expect(server.port).toBeGreaterThan(0);
    expect(server.address).toBe(`127.0.0.1:${server.port}`);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.listening).toBe(true);
  });

  test("listen: false creates it without listening; start() then serves what was set meanwhile", async () => {
    const probe = await createManagementServer();
    const port = probe.port;
    await probe.close();
    const server = await createManagementServer({ port, listen: false });
    cleanups.push(() => server.close());
    expect(server.listening).toBe(false);
    expect(await portIsFree(port)).toBe(true);
    server.setResource(buildCluster({ name: "c1" }));
    await server.start();
    expect(server.listening).toBe(true);
    const h = createHarness(server.url);
    cleanups.push(() => h.cleanup());
    const { first } = await subscribe(server, h, CDS_TYPE_URL, ["c1"]);
    expect(namesOf(first)).toEqual(["c1"]);
  });

  test("close() ends every stream and frees the port", async () => {
    const { server, h } = await started();
    const { s } = await subscribe(server, h, CDS_TYPE_URL, ["c1"]);
    const port = server.port;
    await server.close();
    const error = await s.ended();
    expect(error).toBeInstanceOf(ConnectError);
    expect(server.streams()).toEqual([]);
    expect(server.listening).toBe(false);
    expect(await portIsFree(port)).toBe(true);
    await expect(server.start()).rejects.toThrow(/closed/);
    await server.close();
  });

  test("close() rejects the hooks' pending waits instead of leaving them hanging", async () => {
    const { server } = await started();
    const pending = server.hooks.waitForRequest((r) => r.typeUrl === "never", { timeoutMs: 60_000 });
    await server.close();
    await expect(pending).rejects.toThrow("server closed while waiting for a request event");
  });

  test("restart() ends the streams with UNAVAILABLE, listens on the same port, and keeps the resources", async () => {
    const { server, h } = await started();
    const { s } = await subscribe(server, h, CDS_TYPE_URL, ["c1"]);
    const port = server.port;
    const mark = server.hooks.mark();
    await server.restart();
    const error = await s.ended();
    expect(error?.code).toBe(Code.Unavailable);
    const closed = await server.hooks.waitForStreamClose(undefined, { after: mark });
    expect(closed).toMatchObject({ reason: "server-stopped", code: Code.Unavailable });
    expect(server.port).toBe(port);
    const again = await subscribe(server, h, CDS_TYPE_URL, ["c1"]);
    expect(namesOf(again.first)).toEqual(["c1"]);
  });

  test("stop() refuses connections until start()", async () => {
    const { server, h } = await started();
    await server.stop();
    expect(server.listening).toBe(false);
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: ["c1"] }).catch(() => {});
    expect((await s.ended())?.code).toBe(Code.Unavailable);
    await server.start();
    const again = await subscribe(server, h, CDS_TYPE_URL, ["c1"]);
    expect(namesOf(again.first)).toEqual(["c1"]);
  });

  test("a port in use is reported", async () => {
    const { server } = await started();
    await expect(createManagementServer({ port: server.port })).rejects.toThrow(/EADDRINUSE/);
  });

  test("options are checked", async () => {
    await expect(createManagementServer({ port: 70000 })).rejects.toThrow(RangeError);
  });
});

describe("misbehaving clients", () => {
  test("a request without type_url ends that stream with INVALID_ARGUMENT; the server carries on", async () => {
    const { server, h } = await started();
    const good = await subscribe(server, h, CDS_TYPE_URL, ["c1"]);
    const bad = h.sotw();
    await bad.send({ node: { id: "bad" }, resourceNames: ["c1"] });
    const error = await bad.ended();
    expect(error?.code).toBe(Code.InvalidArgument);
    expect(error?.rawMessage).toBe("DiscoveryRequest without type_url");
    const closed = await server.hooks.waitForStreamClose((e) => e.reason === "invalid-request");
    expect(closed.code).toBe(Code.InvalidArgument);
    server.setResource(buildCluster({ name: "c1", edsServiceName: "v2" }));
    expect(namesOf(await good.s.next())).toEqual(["c1"]);
  });

  test("bytes that are not a DiscoveryRequest end the stream with INVALID_ARGUMENT", async () => {
    const { server } = await started();
    const session = http2.connect(server.url);
    cleanups.push(() => session.destroy());
    const stream = session.request({
      ":method": "POST",
      ":path": "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources",
      "content-type": "application/grpc",
      te: "trailers",
    });
    // One gRPC frame: not compressed, 2 bytes: field 1 (string) whose length runs past the end.
    stream.write(Buffer.from([0, 0, 0, 0, 2, 0x0a, 0x7f]));
    const trailers = await new Promise<http2.IncomingHttpHeaders>((resolve) => {
      stream.on("trailers", (headers) => resolve(headers));
      stream.on("response", (headers) => {
        if (headers["grpc-status"] !== undefined) resolve(headers);
      });
      stream.resume();
    });
    expect(trailers["grpc-status"]).toBe(String(Code.InvalidArgument));
    const closed = await server.hooks.waitForStreamClose();
    expect(closed.reason).toBe("invalid-request");
    expect(server.streams()).toEqual([]);
  });

  test("a request larger than maxRequestBytes ends the stream with RESOURCE_EXHAUSTED", async () => {
    const { server, h } = await started({ maxRequestBytes: 1024 });
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: ["x".repeat(2000)] });
    expect((await s.ended())?.code).toBe(Code.ResourceExhausted);
    const again = await subscribe(server, h, CDS_TYPE_URL, ["c1"]);
    expect(namesOf(again.first)).toEqual(["c1"]);
  });

  test("bytes that are not HTTP/2 at all do not disturb the server", async () => {
    const { server, h } = await started();
    const socket = net.connect(server.port, "127.0.0.1");
    cleanups.push(() => socket.destroy());
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n\u0000\u0001garbage");
    await new Promise<void>((resolve) => {
      socket.once("close", () => resolve());
      socket.once("error", () => resolve());
      socket.resume();
    });
    const again = await subscribe(server, h, CDS_TYPE_URL, ["c1"]);
    expect(namesOf(again.first)).toEqual(["c1"]);
  });

  test("a client that cancels is cleaned up", async () => {
    const { server, h } = await started();
    const { s } = await subscribe(server, h, CDS_TYPE_URL, ["c1"]);
    s.abort();
    const closed = await server.hooks.waitForStreamClose();
    expect(closed.reason).toBe("cancelled");
    expect(server.streams()).toEqual([]);
  });

  test("delta can be turned off: UNIMPLEMENTED", async () => {
    const { h } = await started({ delta: false });
    const d = h.delta();
    await d.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNamesSubscribe: ["c1"] }).catch(() => {});
    expect((await d.ended())?.code).toBe(Code.Unimplemented);
  });
});
