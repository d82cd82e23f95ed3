// The transport against backends that misbehave, over real HTTP/2 on 127.0.0.1, routed by the control plane:
// a length prefix far past the receive limit, a TCP reset in the middle of a call, a grpc-message that is not valid
// percent-encoding, and backends that would keep sockets open after close() (no SETTINGS, SETTINGS_MAX_CONCURRENT_
// STREAMS 0, PUSH_PROMISE). Unary calls run on the lean call, streaming calls on connect's protocol code: each case
// runs both.
import { create, toBinary } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import type { ManagementServer } from "@xdskit/control-plane";
import { RetryPolicySchema } from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import type { RouteConfiguration } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport, type XdsTransportOptions } from "../src/index.js";
import { EchoService } from "./support/echo-service.js";
import { type Frame, startFrameServer } from "./support/frame-server.js";
import { clientFor, simpleSnapshot, startControlPlane } from "./support/harness.js";
import {
  GRPC_HEADERS,
  type HostileBackend,
  lengthPrefix,
  startHttp2Backend,
  startSilentBackend,
} from "./support/hostile-backends.js";

type Echo = {
  unary(request: { value: string }, options?: object): Promise<{ value: string }>;
  serverStream(request: { value: string }, options?: object): AsyncIterable<{ value: string }>;
};

/** The error a promise fails with (a ConnectError), or undefined when it succeeds. */
async function failure(call: Promise<unknown>): Promise<ConnectError | undefined> {
  return call.then(
    () => undefined,
    (error: unknown) => ConnectError.from(error),
  );
}

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream);
}

/** Waits (polling every 5 ms, at most 5 s) until `condition` holds. */
async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 5) {
    if (waited > 5_000) throw new Error("condition not met within 5 s");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("hostile backends", () => {
  let server: ManagementServer;
  let client: XdsClient;
  const transports: XdsTransport[] = [];
  const backends: HostileBackend[] = [];
  let next = 0;

  beforeAll(async () => {
    server = await startControlPlane();
    client = clientFor(server);
  });
  const closeTransports = () => Promise.all(transports.splice(0).map((t) => t.close()));
  afterEach(async () => {
    await closeTransports();
    await Promise.all(backends.splice(0).map((b) => b.close()));
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  /** A transport to a listener of its own (its route edited by `edit`) whose one endpoint is `backend`. */
  function echoTo(
    backend: HostileBackend,
    options: Partial<XdsTransportOptions> = {},
    edit: (route: RouteConfiguration) => void = () => {},
  ): Echo {
    const name = `hostile-${next++}`;
    backends.push(backend);
    const resources = simpleSnapshot(name, `${name}-cluster`, [{ zone: "z1", endpoints: [backend.address] }]);
    edit(resources[1] as RouteConfiguration);
    server.setSnapshot(resources);
    const transport = createXdsTransport({ target: `xds:///${name}`, client, ...options });
    transports.push(transport);
    return createClient(EchoService, transport) as unknown as Echo;
  }

  describe("a length prefix past the receive limit", () => {
    const CLAIMED = 0xffff_fff0;
    /** Headers, the prefix 0xFFFFFFF0, then 1 KiB; then trailers when `end`, else the stream stays open. */
    const claimHuge = (end: boolean) =>
      startHttp2Backend((stream) => {
        stream.respond(GRPC_HEADERS, { waitForTrailers: true });
        stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.write(lengthPrefix(CLAIMED));
        if (end) stream.end(Buffer.alloc(1024, 7));
        else stream.write(Buffer.alloc(1024, 7));
      });

    it("fails RESOURCE_EXHAUSTED on the default limit (4 MiB), unary and streaming, reserving nothing", async () => {
      const echo = echoTo(await claimHuge(false));
      const unary = await failure(echo.unary({ value: "x" }, { timeoutMs: 5_000 }));
      const heldAfterUnary = process.memoryUsage().arrayBuffers;
      const streamed = await failure(drain(echo.serverStream({ value: "x" }, { timeoutMs: 5_000 })));
      const heldAfterStream = process.memoryUsage().arrayBuffers;
      const tooLarge = `message size ${CLAIMED} is larger than configured readMaxBytes 4194304`;
      expect([unary?.code, unary?.rawMessage]).toEqual([Code.ResourceExhausted, tooLarge]);
      expect([streamed?.code, streamed?.rawMessage]).toEqual([Code.ResourceExhausted, tooLarge]);
      // Every ArrayBuffer of the process, collected or not: far below the 4 GiB claimed.
      expect(heldAfterUnary).toBeLessThan(CLAIMED / 4);
      expect(heldAfterStream).toBeLessThan(CLAIMED / 4);
    });

    it("with the limit raised to connect's 4 GiB, holds only the bytes that arrived", async () => {
      const echo = echoTo(await claimHuge(true), { readMaxBytes: 0xffff_ffff });
      const unary = await failure(echo.unary({ value: "x" }, { timeoutMs: 5_000 }));
      const heldAfterUnary = process.memoryUsage().arrayBuffers;
      const streamed = await failure(drain(echo.serverStream({ value: "x" }, { timeoutMs: 5_000 })));
      const heldAfterStream = process.memoryUsage().arrayBuffers;
      // The body ended inside the message.
      expect([unary?.code, unary?.rawMessage]).toEqual([Code.InvalidArgument, "protocol error: incomplete envelope"]);
      expect([streamed?.code, streamed?.rawMessage]).toEqual([
        Code.InvalidArgument,
        "protocol error: incomplete envelope",
      ]);
      expect(heldAfterUnary).toBeLessThan(CLAIMED / 4);
      expect(heldAfterStream).toBeLessThan(CLAIMED / 4);
    });
  });

  describe("a TCP reset in the middle of a call", () => {
    const responseHeaders: Frame = {
      type: "headers",
      headers: [
        [":status", "200"],
        ["content-type", "application/grpc"],
      ],
    };
    /** The response headers and part of a message, then a TCP reset (what a crashing backend does). */
    const resetAfterHeaders: Frame[] = [
      responseHeaders,
      { type: "data", bytes: Buffer.concat([lengthPrefix(10), Buffer.from("abc")]) },
      { type: "tcp_reset" },
    ];
    /** A backend, on the frame server, that `answer`s. */
    async function frameBackend(answer: readonly Frame[] | (() => readonly Frame[])): Promise<HostileBackend> {
      const frames = await startFrameServer();
      frames.answer(answer);
      return { ...frames, accepted: 0, sockets: new Set(), close: () => frames.close() };
    }

    it("fails the call UNAVAILABLE, unary and streaming (not ABORTED)", async () => {
      const echo = echoTo(await frameBackend(resetAfterHeaders));
      const unary = await failure(echo.unary({ value: "x" }, { timeoutMs: 5_000 }));
      const streamed = await failure(drain(echo.serverStream({ value: "x" }, { timeoutMs: 5_000 })));
      // The reset reaches the call as the socket's ECONNRESET, or (when the session saw it first) as the connection
      // ending under the call: UNAVAILABLE both ways.
      const gone = /^read ECONNRESET$|ended before the call did$/;
      expect(unary?.code).toBe(Code.Unavailable);
      expect(unary?.rawMessage).toMatch(gone);
      expect(streamed?.code).toBe(Code.Unavailable);
      expect(streamed?.rawMessage).toMatch(gone);
    });

    it("is retried by a route whose retry policy names unavailable, unless response headers came first (A6)", async () => {
      const message = toBinary(StringValueSchema, create(StringValueSchema, { value: "second" }));
      const answered: Frame[] = [
        responseHeaders,
        { type: "data", bytes: Buffer.concat([lengthPrefix(message.length), message]) },
        { type: "headers", headers: [["grpc-status", "0"]], endStream: true },
      ];
      const retrying = (route: RouteConfiguration) => {
        const action = route.virtualHosts[0]?.routes[0]?.action;
        if (action?.case !== "route") throw new Error("route action expected");
        action.value.retryPolicy = create(RetryPolicySchema, {
          retryOn: "unavailable",
          numRetries: 1,
          retryBackOff: { baseInterval: { nanos: 1_000_000 }, maxInterval: { nanos: 2_000_000 } },
        });
      };
      // The reset before any response: the attempt is not committed and is made again.
      let streams = 0;
      const resetFirst: Frame[] = [{ type: "tcp_reset" }];
      const echo = echoTo(await frameBackend(() => (++streams === 1 ? resetFirst : answered)), {}, retrying);
      expect(await echo.unary({ value: "x" }, { timeoutMs: 5_000 })).toMatchObject({ value: "second" });
      expect(streams).toBe(2);
      // The reset after the response headers: the server had started answering, the call is committed.
      let committedStreams = 0;
      const committed = echoTo(
        await frameBackend(() => (++committedStreams === 1 ? resetAfterHeaders : answered)),
        {},
        retrying,
      );
      expect((await failure(committed.unary({ value: "x" }, { timeoutMs: 5_000 })))?.code).toBe(Code.Unavailable);
      expect(committedStreams).toBe(1);
    });
  });

  describe("a grpc-message that is not valid percent-encoding", () => {
    const MESSAGE = "bad %E0%A4%A and %ZZ %";
    // Valid escapes decoded (an incomplete UTF-8 sequence as U+FFFD), invalid ones kept as they are.
    const LENIENT = "bad \uFFFD%A and %ZZ %";

    it("keeps the status of a trailers-only response and decodes the message leniently, unary and streaming", async () => {
      const echo = echoTo(
        await startHttp2Backend((stream) =>
          stream.respond({ ...GRPC_HEADERS, "grpc-status": "13", "grpc-message": MESSAGE }, { endStream: true }),
        ),
      );
      const unary = await failure(echo.unary({ value: "x" }, { timeoutMs: 5_000 }));
      const streamed = await failure(drain(echo.serverStream({ value: "x" }, { timeoutMs: 5_000 })));
      expect([unary?.code, unary?.rawMessage]).toEqual([Code.Internal, LENIENT]);
      expect([streamed?.code, streamed?.rawMessage]).toEqual([Code.Internal, LENIENT]);
    });

    it("does the same for a message in the trailers", async () => {
      const echo = echoTo(
        await startHttp2Backend((stream) => {
          stream.respond(GRPC_HEADERS, { waitForTrailers: true });
          stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "13", "grpc-message": MESSAGE }));
          stream.end();
        }),
      );
      const unary = await failure(echo.unary({ value: "x" }, { timeoutMs: 5_000 }));
      const streamed = await failure(drain(echo.serverStream({ value: "x" }, { timeoutMs: 5_000 })));
      expect([unary?.code, unary?.rawMessage]).toEqual([Code.Internal, LENIENT]);
      expect([streamed?.code, streamed?.rawMessage]).toEqual([Code.Internal, LENIENT]);
    });
  });

  describe("close() ends every connection the transport opened", () => {
    it("one still connecting to a backend that never sends SETTINGS", async () => {
      const backend = await startSilentBackend();
      const echo = echoTo(backend);
      const call = failure(echo.unary({ value: "x" }));
      await until(() => backend.accepted > 0);
      await closeTransports();
      expect((await call)?.code).toBe(Code.Unavailable);
      await backend.allClosed();
    });

    it("one whose calls SETTINGS_MAX_CONCURRENT_STREAMS 0 keeps queued: they fail UNAVAILABLE", async () => {
      let streams = 0;
      const backend = await startHttp2Backend(
        () => {
          streams++;
        },
        { maxConcurrentStreams: 0 },
      );
      let started = 0;
      const echo = echoTo(backend, { metrics: { addCounter: () => void started++ } });
      const unary = failure(echo.unary({ value: "x" }));
      const streamed = failure(drain(echo.serverStream({ value: "x" })));
      // Both attempts started (picked on the READY connection); a macrotask later both streams are open on it,
      // queued behind the server's limit.
      await until(() => started === 2);
      await new Promise((resolve) => setImmediate(resolve));
      await closeTransports();
      await backend.allClosed();
      expect((await unary)?.code).toBe(Code.Unavailable);
      expect((await streamed)?.code).toBe(Code.Unavailable);
      expect(streams).toBe(0);
    });

    it("one to a backend that sends PUSH_PROMISE: push is refused", async () => {
      const frames = await startFrameServer();
      frames.answer([
        {
          type: "push_promise",
          headers: [
            [":method", "GET"],
            [":path", "/pushed"],
            [":scheme", "http"],
            [":authority", "x"],
          ],
        },
        {
          type: "headers",
          headers: [
            [":status", "200"],
            ["content-type", "application/grpc"],
            ["grpc-status", "0"],
          ],
          endStream: true,
        },
      ]);
      const echo = echoTo({ ...frames, accepted: 0, sockets: new Set(), close: () => frames.close() });
      const call = await failure(echo.unary({ value: "x" }, { timeoutMs: 5_000 }));
      await closeTransports();
      // A pushed stream nobody reads would hold the connection open.
      await frames.allClosed();
      // The client advertises SETTINGS_ENABLE_PUSH 0: the PUSH_PROMISE fails the connection (a protocol error).
      expect([call?.code, call?.rawMessage]).toEqual([Code.Unavailable, "Protocol error"]);
    });
  });
});
