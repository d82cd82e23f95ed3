// A server that does not speak HTTP/2 never crashes the process: a TCP server answering `HTTP/1.1 400 Bad Request`,
// the same behind TLS (ALPN without h2), and a TLS client dialling a plain-text server. Each connection attempt
// fails the ADS stream (the watchers get UNAVAILABLE) and nothing reaches `process.on("uncaughtException")`: every
// HTTP/2 session and socket the default transport makes has an 'error' listener for its whole life.
// The fuzz-style version (random bytes from the server side of the socket) is test/fuzz/non-http2-bytes.test.ts.
import * as net from "node:net";
import * as tls from "node:tls";
import { createTestCa, issueLocalhost, type TestCa } from "@xdskit/test-pki";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { clusterResourceType, type XdsClient } from "../src/index.js";
import { createXdsClientWithInternals } from "../src/internal.js";
import { type PemDir, pemDir, tlsChannelCreds, writeCa } from "./fixtures/pki.js";
import { type RecordingWatcher, recordingWatcher, summarize } from "./support/recorder.js";
import { countUncaught, until } from "./support/uncaught.js";

const HTTP1_400 = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

let ca: TestCa;
let dir: PemDir;
let caFile: string;
const cleanups: (() => Promise<void> | void)[] = [];
const uncaught = countUncaught();

beforeAll(() => {
  ca = createTestCa();
  dir = pemDir();
  caFile = writeCa(dir, "ca", ca);
}, 60_000);

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(() => dir.remove());

/** Serves `server` on 127.0.0.1; counts its connections, answers each first chunk with HTTP/1.1 400 and closes. */
async function http1(server: net.Server): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  };
  server.on("connection", (socket: net.Socket) => {
    connections += 1;
    track(socket);
    if (!(server instanceof tls.Server)) socket.once("data", () => socket.end(HTTP1_400));
  });
  server.on("secureConnection", (socket: tls.TLSSocket) => {
    track(socket);
    socket.once("data", () => socket.end(HTTP1_400));
  });
  // A TLS client on a plain server, or a handshake the TLS server refuses, is the client's problem, not the test's.
  server.on("tlsClientError", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as net.AddressInfo).port, connections: () => connections };
}

function client(serverUri: string, apiType: "GRPC" | "DELTA_GRPC", channelCreds: object[]): XdsClient {
  const created = createXdsClientWithInternals(
    {
      bootstrap: {
        xds_servers: [{ server_uri: serverUri, channel_creds: channelCreds as never, api_type: apiType }],
        node: { id: "n" },
      },
      env: {},
    },
    // Retries every ~20 ms, so a test sees several connection attempts at once.
    { backoff: { initialMs: 20, maxMs: 20 } },
  );
  cleanups.push(() => created.close());
  return created;
}

/** Watches a cluster until the server saw `attempts` connections; the watcher's first events. */
async function watchThrough(
  c: XdsClient,
  connections: () => number,
  attempts: number,
): Promise<RecordingWatcher<unknown>> {
  const w = recordingWatcher<unknown>();
  c.watch(clusterResourceType, "c", w);
  await until(() => connections() >= attempts && w.events.length > 0);
  return w;
}

describe.each(["GRPC", "DELTA_GRPC"] as const)(
  "a server that does not speak HTTP/2 (%s)",
  (apiType) => {
    it("answering HTTP/1.1 400 is a connectivity error for the watchers, every time, and never an uncaught exception", async () => {
      const before = uncaught.count();
      const server = await http1(net.createServer());
      const c = client(`127.0.0.1:${server.port}`, apiType, [{ type: "insecure" }]);
      const w = await watchThrough(c, server.connections, 4);
      expect(summarize(w.take() as never).slice(0, 1)).toEqual(["error:UNAVAILABLE:connection"]);
      await c.close();
      await new Promise((resolve) => setImmediate(resolve));
      expect(uncaught.count() - before).toBe(0);
    });

    it.each([
      ["refusing h2 in ALPN", ["http/1.1"]],
      ["ignoring ALPN", undefined],
    ])("behind TLS %s, the same", async (_, alpn) => {
      const before = uncaught.count();
      const cert = issueLocalhost(ca);
      const server = await http1(tls.createServer({ ...cert, ...(alpn ? { ALPNProtocols: alpn } : {}) }));
      const c = client(`localhost:${server.port}`, apiType, tlsChannelCreds(caFile));
      const w = await watchThrough(c, server.connections, 3);
      const [first] = w.take();
      expect(first?.kind === "error" ? first.error.code : first?.kind).toBe(14);
      await c.close();
      await new Promise((resolve) => setImmediate(resolve));
      expect(uncaught.count() - before).toBe(0);
    });

    it("a TLS client on a plain-text HTTP/1.1 server gets a TLS error, named, and no uncaught exception", async () => {
      const before = uncaught.count();
      const server = await http1(net.createServer());
      const c = client(`localhost:${server.port}`, apiType, tlsChannelCreds(caFile));
      const w = await watchThrough(c, server.connections, 3);
      const [first] = w.take();
      expect(first?.kind).toBe("error");
      if (first?.kind === "error") {
        expect(first.error.code).toBe(14);
        expect(first.error.message).toMatch(/TLS handshake with xDS server localhost:\d+ failed/);
      }
      await c.close();
      await new Promise((resolve) => setImmediate(resolve));
      expect(uncaught.count() - before).toBe(0);
    });
  },
  60_000,
);
