// The lean gRPC path (src/calls/grpc-fast-path.ts) against the slow path (connectNodeAdapter), over real HTTP/2:
// two xDS-enabled servers with the same routes, one with the lean path and one with `leanGrpc: false`, get the
// same raw requests (content types, timeouts, encodings, bodies well and badly framed, handlers that answer, throw,
// set headers and trailers, read the signal), and must answer byte for byte the same: status, headers (but `date`),
// body, trailers, reset code. A record of which calls reached a handler on the lean path shows that the property
// does compare the two paths and not the slow one twice.
import { type ClientHttp2Session, constants as h2, connect as http2Connect } from "node:http2";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import type { ManagementServer } from "@xdskit/control-plane";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EchoService } from "./support/echo-service.js";
import { type StartedServer, type StartOptions, serving, startControlPlane, startServer } from "./support/harness.js";
import { serverListener } from "./support/server-listener.js";

const UNARY = "/xdskit.test.Echo/Unary";
const STREAM = "/xdskit.test.Echo/ServerStream";
const text = (value: string) => create(StringValueSchema, { value });

/** Which server's handler ran a call on the lean path (its context is the lean one). */
const leanCalls = new Map<string, number>();

/** The handler's behaviour is named by the request's value: `<behaviour>` or `<behaviour>:<arg>`. */
function behaviourRoutes(server: string) {
  return (router: ConnectRouter) => {
    router.service(EchoService, {
      async unary(request: { value: string }, context: HandlerContext) {
        if (typeof (context as { finish?: unknown }).finish === "function") {
          leanCalls.set(server, (leanCalls.get(server) ?? 0) + 1);
        }
        const [behaviour, arg = ""] = request.value.split(":");
        switch (behaviour) {
          case "throw-connect": {
            const error = new ConnectError(`no ${arg} here % ü`, Code.NotFound, { "x-error-meta": "m1" });
            error.details = [{ desc: StringValueSchema, value: { value: "detail" } }];
            throw error;
          }
          case "throw-plain":
            throw new Error("plain failure");
          case "headers":
            context.responseHeader.set("x-response", arg);
            context.responseHeader.append("x-multi", "a");
            context.responseHeader.append("x-multi", "b");
            context.responseTrailer.set("x-trailer", arg);
            return text("with headers");
          case "init":
            return { value: `init ${arg}` };
          case "big":
            return text("z".repeat(2000));
          case "signal":
            await new Promise((resolve) => setImmediate(resolve));
            return text(
              `aborted ${context.signal.aborted} ${context.signal.reason instanceof ConnectError ? Code[context.signal.reason.code] : ""}`,
            );
          case "context":
            return text(
              [
                context.url,
                context.requestMethod,
                context.protocolName,
                context.timeoutMs() === undefined ? "no deadline" : "deadline",
                context.requestHeader.get("x-a") ?? "-",
                context.requestHeader.get(":path") ?? "-",
                context.method.name,
                context.service.typeName,
                context.responseHeader.get("content-type"),
                context.responseTrailer.get("grpc-status"),
              ].join("|"),
            );
          default:
            return text(`echo ${request.value}`);
        }
      },
      async *serverStream(request: { value: string }, context: HandlerContext) {
        if (typeof (context as { finish?: unknown }).finish === "function") {
          leanCalls.set(server, (leanCalls.get(server) ?? 0) + 1);
        }
        const [behaviour, arg = ""] = request.value.split(":");
        switch (behaviour) {
          case "none":
            return;
          case "fail-first":
            throw new ConnectError(`nothing for ${arg}`, Code.FailedPrecondition, { "x-error-meta": "s1" });
          case "fail-after":
            yield text("one");
            yield { value: "two" };
            throw new Error("broke after two");
          case "headers":
            context.responseHeader.set("x-response", arg);
            context.responseTrailer.set("x-trailer", arg);
            yield text("first");
            // Too late for the headers (they went with the first message); the trailer still counts.
            context.responseHeader.set("x-late", "1");
            context.responseTrailer.set("x-late-trailer", "1");
            yield text("second");
            return;
          case "big":
            for (let i = 0; i < 3; i++) yield text(String(i).repeat(1500));
            return;
          default:
            for (let i = 0; i < 3; i++) yield text(`stream ${request.value} ${i}`);
        }
      },
      held(request: { value: string }) {
        return text(`held ${request.value}`);
      },
    } as never);
  };
}

interface RawRequest {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: readonly Uint8Array[];
}

interface RawResponse {
  readonly headers: Record<string, unknown>;
  readonly body: string;
  readonly trailers: Record<string, unknown>;
  readonly rstCode: number;
}

function withoutDate(headers: Record<string, unknown>): Record<string, unknown> {
  const { date: _date, ...rest } = headers;
  return rest;
}

function send(session: ClientHttp2Session, request: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": request.path,
      ":authority": "lean.test:50051",
      te: "trailers",
      ...request.headers,
    });
    let headers: Record<string, unknown> = {};
    let trailers: Record<string, unknown> = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      headers = withoutDate({ ...h });
    });
    stream.on("trailers", (t) => {
      trailers = { ...t };
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("error", () => {});
    stream.on("close", () =>
      resolve({ headers, body: Buffer.concat(chunks).toString("hex"), trailers, rstCode: stream.rstCode ?? -1 }),
    );
    const onError = (error: Error) => reject(error);
    session.once("error", onError);
    stream.once("close", () => session.off("error", onError));
    for (const part of request.body) stream.write(part);
    stream.end();
  });
}

function envelope(flags: number, data: Uint8Array): Uint8Array {
  const out = Buffer.alloc(5 + data.length);
  out[0] = flags;
  out.writeUInt32BE(data.length, 1);
  out.set(data, 5);
  return out;
}

const message = (value: string) => toBinary(StringValueSchema, text(value));

/** A request body of one kind. */
function bodyOf(kind: string, value: string): Uint8Array[] {
  const data = message(value);
  switch (kind) {
    case "one":
      return [envelope(0, data)];
    case "split": {
      const whole = envelope(0, data);
      return [whole.subarray(0, 3), whole.subarray(3)];
    }
    case "none":
      return [];
    case "two":
      return [envelope(0, data), envelope(0, data)];
    case "truncated":
      return [envelope(0, data).subarray(0, 6)];
    case "gzipped":
      return [envelope(1, gzipSync(data))];
    case "flagged":
      return [envelope(1, data)];
    case "garbage":
      return [envelope(0, new Uint8Array([0xff, 0xff, 0xff]))];
    default:
      return [envelope(0, data)];
  }
}

/** A lean server and a slow one (`leanGrpc: false`), each given `routes(label)`, once both are serving. */
async function startPair(
  controlPlane: ManagementServer,
  routes: (label: "lean" | "slow") => NonNullable<StartOptions["routes"]>,
): Promise<StartedServer[]> {
  const pair: StartedServer[] = [];
  for (const [label, leanGrpc] of [
    ["lean", true],
    ["slow", false],
  ] as const) {
    const started = await startServer(controlPlane, { routes: routes(label), leanGrpc });
    controlPlane.setResource(serverListener({ name: started.name, host: started.host, port: started.port }));
    await started.statuses.until(serving);
    pair.push(started);
  }
  return pair;
}

describe("the lean gRPC path answers as connectNodeAdapter does", () => {
  let controlPlane: ManagementServer;
  const servers: StartedServer[] = [];
  let lean: ClientHttp2Session;
  let slow: ClientHttp2Session;

  beforeAll(async () => {
    controlPlane = await startControlPlane();
    servers.push(...(await startPair(controlPlane, behaviourRoutes)));
    lean = http2Connect(`http://127.0.0.1:${servers[0]!.port}`);
    slow = http2Connect(`http://127.0.0.1:${servers[1]!.port}`);
  });
  afterAll(async () => {
    lean?.close();
    slow?.close();
    for (const started of servers) await started.server.close();
    await controlPlane?.close();
  });

  async function both(request: RawRequest): Promise<[RawResponse, RawResponse]> {
    return [await send(lean, request), await send(slow, request)];
  }

  it("takes a plain unary call, and answers it as the slow path does", async () => {
    const before = leanCalls.get("lean") ?? 0;
    const request = { path: UNARY, headers: { "content-type": "application/grpc" }, body: bodyOf("one", "hello") };
    const [fast, reference] = await both(request);
    expect(leanCalls.get("lean")).toBe(before + 1);
    expect(leanCalls.get("slow")).toBeUndefined();
    expect(fast).toEqual(reference);
    expect(fast.headers).toMatchObject({ ":status": 200, "content-type": "application/grpc+proto" });
    expect(fast.trailers).toMatchObject({ "grpc-status": "0" });
    expect(Buffer.from(fast.body, "hex").subarray(5)).toEqual(Buffer.from(message("echo hello")));
  });

  it("refuses a request message past gRPC's 4 MiB by its length prefix, on both paths alike, and takes 1 MiB", async () => {
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(4 * 1024 * 1024 + 1, 1);
    const declared = { path: UNARY, headers: { "content-type": "application/grpc" }, body: [prefix, Buffer.from("x")] };
    const [fast, reference] = await both(declared);
    expect(fast).toEqual(reference);
    expect({ ...fast.headers, ...fast.trailers }).toMatchObject({ "grpc-status": String(Code.ResourceExhausted) });
    const large = {
      path: UNARY,
      headers: { "content-type": "application/grpc" },
      body: bodyOf("one", "m".repeat(1 << 20)),
    };
    const [fastLarge, referenceLarge] = await both(large);
    expect(fastLarge).toEqual(referenceLarge);
    expect(fastLarge.trailers).toMatchObject({ "grpc-status": "0" });
  });

  it("answers every kind of request byte for byte as the slow path does (property)", async () => {
    const before = leanCalls.get("lean") ?? 0;
    const behaviour = fc.constantFrom(
      "hello",
      "throw-connect:thing",
      "throw-plain",
      "headers:h1",
      "init:x",
      "big",
      "signal",
      "context",
    );
    const accept = fc.constantFrom(undefined, "", "gzip", "br", "identity", "deflate, gzip", "snappy, br");
    const extra = fc.option(fc.constantFrom("v1", "v2"), { nil: undefined });
    // Calls the lean path takes (their handlers vary), and calls of every kind, most of which it leaves.
    // "500H" is a long deadline within Node's timer limit: past it (say "99999999H") Connect's own handler sets a
    // timer that Node fires at once and aborts the signal, which the lean path does not copy (docs/decisions.md).
    const takeable = fc.record({
      path: fc.constant(UNARY),
      contentType: fc.constantFrom("application/grpc", "application/grpc+proto"),
      timeout: fc.constantFrom(undefined, "5S", "0m", "500H"),
      encoding: fc.constantFrom(undefined, "identity"),
      accept,
      body: fc.constantFrom("one", "split"),
      behaviour,
      extra,
    });
    const anyKind = fc.record({
      path: fc.constantFrom(UNARY, `${UNARY}?q=1`, STREAM, "/xdskit.test.Echo/Nope"),
      contentType: fc.constantFrom(
        "application/grpc",
        "application/grpc+proto",
        "application/grpc+json",
        "application/GRPC",
        undefined,
      ),
      timeout: fc.constantFrom(undefined, "5S", "0m", "1x", "500H"),
      encoding: fc.constantFrom(undefined, "identity", "gzip", "snappy"),
      accept,
      body: fc.constantFrom("one", "split", "none", "two", "truncated", "gzipped", "flagged", "garbage"),
      behaviour,
      extra,
    });
    const streamBehaviour = fc.constantFrom("hello", "none", "fail-first:x", "fail-after", "headers:h2", "big");
    const takeableStream = takeable.chain((r) =>
      streamBehaviour.map((behaviour) => ({ ...r, path: STREAM, behaviour })),
    );
    const request = fc.oneof(
      { arbitrary: takeable, weight: 2 },
      { arbitrary: takeableStream, weight: 2 },
      { arbitrary: anyKind, weight: 3 },
    );
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const headers: Record<string, string> = {};
        if (r.contentType !== undefined) headers["content-type"] = r.contentType;
        if (r.timeout !== undefined) headers["grpc-timeout"] = r.timeout;
        if (r.encoding !== undefined) headers["grpc-encoding"] = r.encoding;
        if (r.accept !== undefined) headers["grpc-accept-encoding"] = r.accept;
        if (r.extra !== undefined) headers["x-a"] = r.extra;
        const [fast, reference] = await both({ path: r.path, headers, body: bodyOf(r.body, r.behaviour) });
        expect(fast).toEqual(reference);
      }),
      { numRuns: 100 },
    );
    // The property compared the lean path with the slow one on a good share of its runs.
    expect((leanCalls.get("lean") ?? 0) - before).toBeGreaterThan(30);
    // 200 calls: 11.9 s in a full npm test on the 2-core machine (the 20 s default was too close): an explicit budget.
  }, 120_000);

  it("gives the handler a signal that aborts with CANCELED when the client resets the stream, on both paths", async () => {
    const aborted = new Map<string, string>();
    const waiting = new Map<string, () => void>();
    const routes = (label: string) => (router: ConnectRouter) =>
      router.service(EchoService, {
        unary(_request: unknown, context: HandlerContext) {
          return new Promise((_resolve, reject) => {
            context.signal.addEventListener("abort", () => {
              const reason = context.signal.reason;
              aborted.set(label, reason instanceof ConnectError ? Code[reason.code] : String(reason));
              reject(reason);
            });
            waiting.get(label)?.();
          });
        },
      } as never);
    const pair = await startPair(controlPlane, routes);
    try {
      for (const [index, label] of ["lean", "slow"].entries()) {
        const session = http2Connect(`http://127.0.0.1:${pair[index]!.port}`);
        const started = new Promise<void>((resolve) => waiting.set(label, resolve));
        const stream = session.request({ ":method": "POST", ":path": UNARY, "content-type": "application/grpc" });
        const closed = new Promise((resolve) => stream.on("close", resolve));
        stream.on("error", () => {});
        stream.end(envelope(0, message("wait")));
        // The handler runs (and waits on its signal); then the client gives up on the call.
        await started;
        stream.close(h2.NGHTTP2_CANCEL);
        await closed;
        await new Promise<void>((resolve) => {
          const poll = () => (aborted.has(label) ? resolve() : setImmediate(poll));
          poll();
        });
        session.close();
      }
      expect(aborted.get("lean")).toBe("Canceled");
      expect(aborted.get("slow")).toBe("Canceled");
    } finally {
      for (const started of pair) await started.server.close();
    }
  });

  it("survives a client that resets calls with an error code, before and after the handler runs, and keeps serving", async () => {
    const port = servers[0]!.port;
    for (const code of [h2.NGHTTP2_INTERNAL_ERROR, h2.NGHTTP2_PROTOCOL_ERROR, h2.NGHTTP2_CANCEL]) {
      const session = http2Connect(`http://127.0.0.1:${port}`);
      // Reset before the body ends (the server is reading it), then reset while a stream runs.
      const reading = session.request({ ":method": "POST", ":path": UNARY, "content-type": "application/grpc" });
      reading.on("error", () => {});
      reading.write(envelope(0, message("hello")).subarray(0, 3));
      await new Promise((resolve) => reading.once("ready", resolve));
      reading.close(code);
      const streaming = session.request({ ":method": "POST", ":path": STREAM, "content-type": "application/grpc" });
      streaming.on("error", () => {});
      streaming.end(envelope(0, message("big")));
      await new Promise((resolve) => streaming.once("data", resolve));
      streaming.close(code);
      await new Promise((resolve) => streaming.once("close", resolve));
      session.close();
    }
    const [fast] = await both({
      path: UNARY,
      headers: { "content-type": "application/grpc" },
      body: bodyOf("one", "x"),
    });
    expect(fast.trailers).toMatchObject({ "grpc-status": "0" });
  });

  it("stops a server stream whose client goes away (the generator's finally runs), on both paths", async () => {
    const stopped = new Map<string, number>();
    const routes = (label: string) => (router: ConnectRouter) =>
      router.service(EchoService, {
        async *serverStream() {
          let sent = 0;
          try {
            for (;;) {
              yield text(`message ${sent++}`);
              await new Promise((resolve) => setImmediate(resolve));
            }
          } finally {
            stopped.set(label, sent);
          }
        },
      } as never);
    const pair = await startPair(controlPlane, routes);
    try {
      for (const [index, label] of ["lean", "slow"].entries()) {
        const session = http2Connect(`http://127.0.0.1:${pair[index]!.port}`);
        const stream = session.request({ ":method": "POST", ":path": STREAM, "content-type": "application/grpc" });
        stream.on("error", () => {});
        stream.end(envelope(0, message("go")));
        // A few messages in, the client gives up.
        let bytes = 0;
        await new Promise<void>((resolve) => {
          stream.on("data", (chunk: Buffer) => {
            bytes += chunk.length;
            if (bytes > 100) resolve();
          });
        });
        stream.close(h2.NGHTTP2_CANCEL);
        await new Promise<void>((resolve) => {
          const poll = () => (stopped.has(label) ? resolve() : setImmediate(poll));
          poll();
        });
        session.close();
      }
      expect(stopped.get("lean")).toBeGreaterThan(0);
      expect(stopped.get("slow")).toBeGreaterThan(0);
    } finally {
      for (const started of pair) await started.server.close();
    }
  });
});
