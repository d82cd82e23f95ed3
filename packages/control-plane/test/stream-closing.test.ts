// How streams end when the client vanishes or lies about a frame's size: a vanished client is a normal close (no
// INVALID_ARGUMENT, no warning), and a refused frame's HTTP/2 stream is really closed.
import * as http2 from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { DiscoveryRequestSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { afterEach, describe, expect, test } from "vitest";
import { buildCluster, CDS_TYPE_URL, createManagementServer, type Logger } from "../src/index.js";
import { createHarness } from "./ads-client.js";
import { grpcFrame, LRS_PATH, rawSession, rawStream, SOTW_PATH } from "./raw-grpc.js";
import { subscribe } from "./util.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface LogLine {
  readonly level: keyof Logger;
  readonly message: string;
}

function recordingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: "error" | "warn" | "info" | "debug") =>
    (message: string): void => {
      lines.push({ level, message });
    };
  return {
    lines,
    logger: { error: at("error"), warn: at("warn"), info: at("info"), debug: at("debug") },
  };
}

async function started(options: Parameters<typeof createManagementServer>[0] = {}) {
  const { logger, lines } = recordingLogger();
  const server = await createManagementServer({ logger, ...options });
  cleanups.push(() => server.close());
  server.setResource(buildCluster({ name: "c1" }));
  return { server, lines };
}

const wildcardCds = toBinary(
  DiscoveryRequestSchema,
  create(DiscoveryRequestSchema, { node: { id: "n" }, typeUrl: CDS_TYPE_URL }),
);
const cdsRequest = toBinary(
  DiscoveryRequestSchema,
  create(DiscoveryRequestSchema, { node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: ["c1"] }),
);

describe("a client that goes away", () => {
  test("mid-frame is a normal close: reason cancelled, no status, no warning", async () => {
    // Steps: a raw client sends half a frame, then its connection is destroyed; the stream closes as cancelled,
    // and nothing above debug is logged.
    const { server, lines } = await started();
    const session = rawSession(server.url);
    const raw = rawStream(session);
    const frame = grpcFrame(cdsRequest);
    raw.stream.write(frame.subarray(0, 7));
    await server.hooks.waitForStreamOpen();
    session.destroy();
    const closed = await server.hooks.waitForStreamClose();
    expect(closed).toMatchObject({ reason: "cancelled", code: undefined });
    expect(lines.filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
    expect(server.streams()).toEqual([]);
  });

  test("with responses stuck behind flow control is a normal close, for every one of many streams", async () => {
    // Steps: 5 connections open 10 streams each, subscribe to 2,000 clusters (more than the HTTP/2 window) and never
    // read; the clusters change twice; the connections vanish at once. Every stream closes as cancelled, with no
    // warning, and a new client is served.
    const { server, lines } = await started({ historyLimit: 0 });
    server.setSnapshot(Array.from({ length: 2000 }, (_, i) => buildCluster({ name: `cluster-${i}` })));
    const sessions = Array.from({ length: 5 }, () => rawSession(server.url));
    for (const session of sessions) {
      for (let i = 0; i < 10; i++) rawStream(session, undefined, { read: false }).stream.write(grpcFrame(wildcardCds));
    }
    while (server.streams().length < 50) await new Promise((resolve) => setTimeout(resolve, 5));
    const ids = server.streams().map((s) => s.id);
    for (const version of ["v1", "v2"]) {
      server.setResource(buildCluster({ name: "cluster-0", edsServiceName: version }));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const session of sessions) session.destroy();
    const closes = await Promise.all(ids.map((id) => server.hooks.waitForStreamClose((e) => e.streamId === id)));
    expect(closes.map((c) => [c.reason, c.code])).toEqual(ids.map(() => ["cancelled", undefined]));
    expect(lines.filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
    const h = createHarness(server.url);
    cleanups.push(() => h.cleanup());
    const again = await subscribe(server, h, CDS_TYPE_URL, ["cluster-1"]);
    expect(again.first.resources).toHaveLength(1);
  });
});

describe("a frame claiming more than maxRequestBytes", () => {
  test("is answered RESOURCE_EXHAUSTED at once and its HTTP/2 stream is closed", async () => {
    // Steps: a raw client writes only the 5-byte header of a 100 MiB message and keeps its side open; the server
    // answers RESOURCE_EXHAUSTED without waiting for the bytes, and closes the HTTP/2 stream (the client sees the
    // stream close although it never ended its side).
    const { server } = await started();
    const session = rawSession(server.url);
    cleanups.push(() => session.destroy());
    const raw = rawStream(session);
    raw.stream.write(grpcFrame(new Uint8Array(0), { claimedLength: 100 * 1024 * 1024 }));
    // The client never ends its side: the stream closes only because the server resets it, with ENHANCE_YOUR_CALM
    // (gRPC's code for RESOURCE_EXHAUSTED) after the status.
    const outcome = await raw.closed;
    expect(outcome.status).toBe(Code.ResourceExhausted);
    expect(outcome.message).toBe(
      `a request of ${100 * 1024 * 1024} bytes exceeds maxRequestBytes (${16 * 1024 * 1024} bytes)`,
    );
    expect(outcome.rstCode).toBe(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
    const closed = await server.hooks.waitForStreamClose();
    expect(closed).toMatchObject({ reason: "invalid-request", code: Code.ResourceExhausted });
  });

  test("right after a response was written still gets its status (found by the fuzz suite)", async () => {
    // Steps: one write carries a valid CDS request and then the header of a 100 MiB message: the server writes the
    // CDS response and refuses the next frame at once; the client gets the response, then RESOURCE_EXHAUSTED in the
    // trailers (not a bare reset).
    const { server } = await started();
    const session = rawSession(server.url);
    cleanups.push(() => session.destroy());
    const raw = rawStream(session);
    raw.stream.write(
      Buffer.concat([grpcFrame(cdsRequest), grpcFrame(new Uint8Array(0), { claimedLength: 100 * 1024 * 1024 })]),
    );
    const outcome = await raw.closed;
    expect(outcome.messages).toHaveLength(1);
    expect(outcome.status).toBe(Code.ResourceExhausted);
    expect(outcome.rstCode).toBe(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
  });
});

describe("a client writing a whole message over maxRequestBytes (20 MiB against 16 MiB) is answered at once", () => {
  // The client writes the message and never half-closes; HTTP/2 flow control holds most of it back. A server that
  // answered with NO_ERROR left a Node client (whose queued write exceeds its own maxSessionMemory, so it drops the
  // answer's headers) waiting until its write ended: 20 s and more.
  const message = (bytes: number) => grpcFrame(new Uint8Array(bytes), {});
  const tooLarge = `a request of ${20 * 1024 * 1024} bytes exceeds maxRequestBytes (${16 * 1024 * 1024} bytes)`;

  test.each([
    ["ADS", SOTW_PATH],
    ["LRS", LRS_PATH],
  ])("%s: a client with room for the answer reads RESOURCE_EXHAUSTED, then the reset", async (_name, path) => {
    const { server } = await started();
    const session = rawSession(server.url, { maxSessionMemory: 64 });
    cleanups.push(() => session.destroy());
    const raw = rawStream(session, path);
    raw.stream.write(message(20 * 1024 * 1024));
    const outcome = await withinBound(raw.closed);
    expect([outcome.status, outcome.message]).toEqual([Code.ResourceExhausted, tooLarge]);
    expect(outcome.rstCode).toBe(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
  });

  test.each([
    ["ADS", SOTW_PATH],
    ["LRS", LRS_PATH],
  ])(
    "%s: a client with the default session memory gets the reset that means RESOURCE_EXHAUSTED",
    async (_name, path) => {
      const { server } = await started();
      const session = rawSession(server.url);
      cleanups.push(() => session.destroy());
      const raw = rawStream(session, path);
      raw.stream.write(message(20 * 1024 * 1024));
      const outcome = await withinBound(raw.closed);
      expect(outcome.rstCode).toBe(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
    },
  );

  test("a Connect client sending a 20 MiB DiscoveryRequest: the call fails at once, the next client is served", async () => {
    const { server } = await started();
    const h = createHarness(server.url);
    cleanups.push(() => h.cleanup());
    const s = h.sotw();
    // The write itself fails with the reset; the stream's end is what the test reads.
    const write = s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: ["x".repeat(20 * 1024 * 1024)] });
    write.catch(() => {});
    // Connect reads a reset as an error of the stream (INTERNAL, naming ENHANCE_YOUR_CALM): what matters is that it
    // comes at once.
    const ended = await withinBound(s.ended(10_000));
    expect(ended?.message).toContain("ENHANCE_YOUR_CALM");
    // The server serves the next client (this client's own session still holds the 20 MiB it queued).
    const other = createHarness(server.url);
    cleanups.push(() => other.cleanup());
    const again = await subscribe(server, other, CDS_TYPE_URL, ["c1"]);
    expect(again.first.resources).toHaveLength(1);
  });
});

/** `promise`, or a failure naming the hang after 10 s (the defect this guards against was a 20 s stall). */
function withinBound<T>(promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("no answer within 10 s: the server left the client waiting")), 10_000);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}
