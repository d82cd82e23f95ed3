// Clients whose server does not speak HTTP/2 (issue 25.1): a TCP server on 127.0.0.1 answers each connection with
// `HTTP/1.1 400 Bad Request` or random bytes. The LRS client and the out-of-band ORCA client must see failed calls
// (UNAVAILABLE, then their retries), and the process no uncaught exception, whatever the bytes.
import * as net from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import { createManagementServer, type ManagementServer } from "@xdskit/control-plane";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { createLrsClient, createOrcaOobClient, type Logger } from "../src/index.js";
import { createSessionManager } from "../src/session-manager.js";
import { waitUntil } from "./support/wait.js";

const HTTP1_400 = Buffer.from("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");

/** After the bytes: FIN, a TCP reset, or nothing (the connection stays open). */
type After = "end" | "reset" | "open";
type Answer = { readonly bytes: Uint8Array; readonly after: After } | { readonly forwardTo: number };

/** A TCP server answering the n-th connection (from 0) as `answer(n)` says: bytes then `after`, or a pipe. */
async function startRawServer(answer: (index: number) => Answer) {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.once("close", () => sockets.delete(socket));
    const plan = answer(connections++);
    if ("forwardTo" in plan) {
      const upstream = net.connect(plan.forwardTo, "127.0.0.1");
      sockets.add(upstream);
      upstream.on("error", () => socket.destroy());
      upstream.once("close", () => sockets.delete(upstream));
      socket.pipe(upstream).pipe(socket);
      return;
    }
    socket.on("data", () => {}); // read the client's preface, answer regardless
    if (plan.after === "end") socket.end(plan.bytes);
    else if (plan.after === "reset") socket.write(plan.bytes, () => socket.resetAndDestroy());
    else socket.write(plan.bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    connections: () => connections,
    open: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function warnings() {
  const lines: string[] = [];
  const logger: Logger = { error: (m) => lines.push(m), warn: (m) => lines.push(m), info: () => {}, debug: () => {} };
  return { lines, logger };
}

describe("a server that does not speak HTTP/2", () => {
  let uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  const closers: (() => unknown)[] = [];
  let control: ManagementServer;

  beforeAll(async () => {
    control = await createManagementServer({ lrsPolicy: { intervalMs: 100 } });
  });
  afterAll(() => control.close());
  beforeEach(() => {
    uncaught = [];
    process.on("uncaughtException", onUncaught);
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    // Anything a destroyed session still had to say is said within a few turns of the event loop.
    await new Promise((resolve) => setTimeout(resolve, 50));
    process.off("uncaughtException", onUncaught);
  });

  test("LRS: HTTP/1.1 400 and random bytes fail calls with UNAVAILABLE, retried with backoff, then the real sink gets the report", async () => {
    // Connections 0-2 get HTTP/1.1 400 (then left open, FIN, reset), 3-5 seeded random bytes (then FIN or reset: a
    // connection left open after bytes that are not a whole frame waits for the handshake timeout), later ones reach
    // the control plane's LRS sink. The client backs off 5, 10, 20, ... ms (no jitter) and, once
    // through, reports the call it counted.
    const random = fc.sample(fc.uint8Array({ minLength: 1, maxLength: 64 }), 3);
    const lrsPort = Number(control.address.split(":").pop());
    const thens: After[] = ["open", "end", "reset", "end", "reset", "end"];
    const raw = await startRawServer((n) =>
      n >= 6
        ? { forwardTo: lrsPort }
        : { bytes: n < 3 ? HTTP1_400 : (random[n - 3] as Uint8Array), after: thens[n] as After },
    );
    closers.push(() => raw.close());
    const { lines, logger } = warnings();
    const client = createLrsClient({
      node: { id: "non-http2-lrs" },
      env: {},
      logger,
      backoff: { initialMs: 5, multiplier: 2, jitter: 0 },
      minReportIntervalMs: 100,
    });
    closers.push(() => client.close());
    const stats = client.localityStats({
      server: { serverUri: raw.address },
      clusterName: "c",
      locality: { zone: "z" },
    });
    stats.callStarted();
    stats.callFinished("ok");
    const report = await control.lrs.waitForReport((r) => r.nodeId === "non-http2-lrs", { timeoutMs: 10_000 });
    expect(uncaught).toEqual([]);
    expect(report.clusterStats[0]?.upstreamLocalityStats[0]?.totalSuccessfulRequests).toBe(1n);
    const failures = lines.filter((line) => line.includes("LRS call failed"));
    expect(failures.length).toBe(6);
    for (const line of failures) expect(line).toMatch(/\[unavailable\]/);
    expect(failures.map((line) => Number(/retrying in (\d+) ms/.exec(line)?.[1]))).toEqual([5, 10, 20, 40, 80, 160]);
  });

  test("LRS and out-of-band ORCA against random answers (seeded): no uncaught exception, every call retried", async () => {
    // Each run: one answer (random bytes, then FIN or a reset; now and then an HTTP/2 frame first) for every
    // connection; both clients are given three connections' worth of failures, then closed.
    const frameHeader = fc.constantFrom(
      Uint8Array.of(0, 0, 0, 4, 0, 0, 0, 0, 0), // an empty SETTINGS frame: the handshake completes, then garbage
      Uint8Array.of(0, 0, 8, 7, 0, 0, 0, 0, 0), // a GOAWAY header
      new Uint8Array(0),
    );
    const answers = fc.record({
      head: frameHeader,
      bytes: fc.uint8Array({ minLength: 1, maxLength: 96 }),
      after: fc.constantFrom<After>("end", "reset"),
    });
    await fc.assert(
      fc.asyncProperty(answers, async ({ head, bytes, after }) => {
        const raw = await startRawServer(() => ({ bytes: Buffer.concat([head, bytes]), after }));
        const { lines, logger } = warnings();
        const lrs = createLrsClient({ node: { id: "fuzz" }, env: {}, logger, backoff: { initialMs: 1, jitter: 0 } });
        const oob = createOrcaOobClient({ server: { serverUri: raw.address }, logger, backoff: { initialMs: 1 } });
        try {
          lrs.localityStats({ server: { serverUri: raw.address }, clusterName: "c", locality: {} }).callStarted();
          oob.subscribe({ intervalMs: 1000, onReport: () => {} });
          await waitUntil(() => raw.connections() >= 6, "six connections", 15_000);
          await waitUntil(
            () =>
              lines.some((l) => l.includes("LRS call failed")) && lines.some((l) => l.includes("StreamCoreMetrics")),
            "both clients saw a failed call",
            15_000,
          );
        } finally {
          await lrs.close();
          oob.close();
          await raw.close();
        }
      }),
      { numRuns: 20 },
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(uncaught).toEqual([]);
  }, 120_000); // 20 runs of real connections: about 1 s alone, 20 s and more with the machine very busy

  test("a server that accepts and never speaks: the call fails UNAVAILABLE at the handshake timeout, the socket is closed", async () => {
    const raw = await startRawServer(() => ({ bytes: new Uint8Array(0), after: "open" }));
    closers.push(() => raw.close());
    const manager = createSessionManager({ baseUrl: `http://${raw.address}`, connectTimeoutMs: 100 });
    closers.push(() => manager.abort());
    const failure = await manager.request("POST", "/x.Y/Z", {}, {}).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ConnectError);
    expect((failure as ConnectError).code).toBe(Code.Unavailable);
    expect((failure as ConnectError).rawMessage).toContain("no HTTP/2 handshake within 100 ms");
    await waitUntil(() => raw.open() === 0, "the server sees the connection closed");
    expect(uncaught).toEqual([]);
  });

  test("a server that completes the handshake, then goes silent: the unanswered PING ends the session and its call", async () => {
    // The server's one frame is an empty SETTINGS; it never acknowledges ours nor answers the PING.
    const settings = Uint8Array.of(0, 0, 0, 4, 0, 0, 0, 0, 0);
    const raw = await startRawServer(() => ({ bytes: settings, after: "open" }));
    closers.push(() => raw.close());
    const manager = createSessionManager({ baseUrl: `http://${raw.address}`, pingIntervalMs: 50, pingTimeoutMs: 50 });
    closers.push(() => manager.abort());
    const stream = await manager.request("POST", "/x.Y/Z", {}, {});
    const error = await new Promise<unknown>((resolve) => stream.once("error", resolve));
    expect(String(error)).toContain("PING unanswered for 50 ms");
    await waitUntil(() => raw.open() === 0, "the server sees the connection closed");
    expect(uncaught).toEqual([]);
  });
});
