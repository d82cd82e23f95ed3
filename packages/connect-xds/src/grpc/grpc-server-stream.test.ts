// The lean server stream (grpc-server-stream.ts through createEndpointTransport) against the connect path it replaces
// (connect's gRPC protocol code over connect-node's HTTP/2 client, connect-path.ts: the same transport with
// `unaryCalls: "connect"`), over real HTTP/2 on 127.0.0.1, as grpc-unary-call.test.ts does for unary calls: for
// random (configuration, call, script), the call runs on the lean transport, then on the connect path, each read to
// its end as fast as it comes, and must end the same way: the response's headers or the error it failed with, every
// message read, then the trailers or the error the messages ended with (class, code, raw message, metadata,
// details), and the same request read by the backend. Scripts are the unary ones (up to three messages, faults whose
// outcome does not depend on chunking); connect-node scripts answer a server stream with their message twice.
import * as http2 from "node:http2";
import { type DescMethodStreaming, toJsonString } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type StreamResponse, type Transport } from "@connectrpc/connect";
import type { Compression } from "@connectrpc/connect/protocol";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import { systemClock } from "@xdskit/orca-lrs-bridge";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EchoService } from "../../test/support/echo-service.js";
import { type Frame, type FrameServer, startFrameServer } from "../../test/support/frame-server.js";
import { GRPC_HEADERS, startHttp2Backend } from "../../test/support/hostile-backends.js";
import { type CallSpec, callAndScript } from "../../test/support/script-arbitraries.js";
import {
  type HeaderList,
  type Script,
  type ScriptedBackend,
  startScriptedBackend,
} from "../../test/support/scripted-backend.js";
import { Http2Connection } from "../connections/connection.js";
import { createEndpointTransport, type EndpointTransportOptions } from "./endpoint-transport.js";

const SERVER_STREAM = EchoService.method.serverStream as DescMethodStreaming;

/** A compression whose every use fails with a plain Error (not a ConnectError). */
const broken: Compression = {
  name: "broken",
  compress: () => Promise.reject(new Error("cannot compress")),
  decompress: () => Promise.reject(new Error("cannot decompress")),
};

const CONFIGS: EndpointTransportOptions[] = [
  {},
  { sendCompression: compressionGzip, compressMinBytes: 4 },
  { acceptCompression: [] },
  { readMaxBytes: 64, writeMaxBytes: 64 },
  { useBinaryFormat: false },
  {
    acceptCompression: [compressionBrotli],
    sendCompression: compressionBrotli,
    compressMinBytes: 0,
    readMaxBytes: 200,
  },
  { acceptCompression: [broken, compressionGzip], sendCompression: broken, compressMinBytes: 8 },
];

interface Pair {
  readonly lean: Transport;
  readonly connect: Transport;
  readonly connection: Http2Connection;
}

type Failure =
  | { code: number; rawMessage: string; message: string; metadata: HeaderList; details: string[] }
  | { thrown: string };

/** How a server stream ended: failed before its response, or its headers, messages and end. */
type Outcome =
  | { failed: Failure }
  | { header: HeaderList; messages: string[]; trailer: HeaderList; ended: "ok" | Failure };

const entries = (headers: Headers): HeaderList => [...headers].filter(([name]) => name !== "date");

function failureOf(error: unknown): Failure {
  if (!(error instanceof ConnectError)) return { thrown: `${(error as Error).name}: ${String(error)}` };
  return {
    code: error.code,
    rawMessage: error.rawMessage,
    message: error.message,
    metadata: entries(error.metadata),
    details: error.details.map(
      (d) =>
        `${"type" in d ? d.type : d.desc.typeName}:${"value" in d ? Buffer.from(d.value as Uint8Array).toString("hex") : ""}`,
    ),
  };
}

async function outcomeOf(call: Promise<StreamResponse>): Promise<Outcome> {
  let response: StreamResponse;
  try {
    response = await call;
  } catch (error) {
    return { failed: failureOf(error) };
  }
  const messages: string[] = [];
  let ended: "ok" | Failure = "ok";
  try {
    for await (const message of response.message) messages.push(toJsonString(StringValueSchema, message as never));
  } catch (error) {
    ended = failureOf(error);
  }
  return { header: entries(response.header), messages, trailer: entries(response.trailer), ended };
}

async function* one(value: string) {
  yield { value };
}

/** A READY connection to `address`. */
async function connectTo(address: string): Promise<Http2Connection> {
  let ready!: () => void;
  const reached = new Promise<void>((resolve) => {
    ready = resolve;
  });
  const connection = new Http2Connection({
    address,
    clock: systemClock,
    random: Math.random,
    onStateChange: (state) => state === "READY" && ready(),
  });
  connection.requestConnection();
  await reached;
  return connection;
}

/**
 * An outcome as compared: when the messages failed on the client (too large, undecodable) rather than by the
 * trailers' status, the trailers are left out. The call then ends before its trailers are read, and whether they had
 * already arrived (and sit in `response.trailer`) depends on timing on both paths: connect's too.
 */
function comparable(outcome: Outcome): Outcome | { readonly trailerNotCompared: Omit<Outcome, "trailer"> } {
  if (!("ended" in outcome) || outcome.ended === "ok") return outcome;
  const ended = outcome.ended;
  const status = outcome.trailer.find(([name]) => name === "grpc-status")?.[1];
  if ("code" in ended && status === String(ended.code)) return outcome;
  const { trailer: _, ...rest } = outcome;
  return { trailerNotCompared: rest };
}

describe("lean server streams", () => {
  let backend: ScriptedBackend;
  const pairs: Pair[] = [];

  beforeAll(async () => {
    backend = await startScriptedBackend();
    for (const config of CONFIGS) {
      const connection = await connectTo(backend.address);
      pairs.push({
        connection,
        lean: createEndpointTransport(connection, config),
        connect: createEndpointTransport(connection, { ...config, unaryCalls: "connect" }),
      });
    }
  });

  afterAll(async () => {
    for (const pair of pairs) pair.connection.close();
    await backend.close();
  });

  let next = 0;
  /** Runs one server stream on `transport` against `script`; `on-receipt` aborts it when the backend has it. */
  function call(transport: Transport, id: string, spec: CallSpec, script: Script): Promise<Outcome> {
    const controller = new AbortController();
    if (spec.abort === "before") controller.abort(spec.reason);
    backend.set(id, script, spec.abort === "on-receipt" ? () => controller.abort(spec.reason) : undefined);
    const headers = new Headers(spec.headers as [string, string][]);
    headers.set("x-script", id);
    return outcomeOf(
      transport.stream(
        SERVER_STREAM,
        spec.abort === undefined ? undefined : controller.signal,
        spec.timeoutMs,
        headers,
        one(spec.value),
      ) as Promise<StreamResponse>,
    );
  }

  it("gives the outcome the connect path gives, for random calls and scripted answers", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: CONFIGS.length - 1 }),
        callAndScript(),
        async (index, { spec, script }) => {
          const pair = pairs[index]!;
          const id = String(next++);
          const lean = await call(pair.lean, id, spec, script);
          const connect = await call(pair.connect, id, spec, script);
          const seen = backend.seen(id);
          const resets = script.kind === "hang" ? await backend.resets(id, 2) : [];
          backend.forget(id);
          expect(comparable(lean)).toEqual(comparable(connect));
          expect(resets[0]).toBe(resets[1]);
          if ("ended" in lean && lean.ended === "ok") expect(seen).toHaveLength(2);
          if (seen.length === 2 && script.kind !== "hang") expect(seen[0]).toEqual(seen[1]);
        },
      ),
      { numRuns: 300 },
    );
  }, 120_000);
});

describe("lean server streams, frame by frame", () => {
  // Frame sequences node:http2's server API does not send: each stream must end on the lean transport as on the
  // connect path, with the outcome pinned here.
  const headers: Frame = {
    type: "headers",
    headers: [
      [":status", "200"],
      ["content-type", "application/grpc"],
    ],
  };
  const message: Frame = { type: "data", bytes: Uint8Array.of(0, 0, 0, 0, 3, 10, 1, 120) };
  const trailers: Frame = { type: "headers", headers: [["grpc-status", "0"]], endStream: true };
  const rst = (code: number): Frame => ({ type: "rst", code });
  const { NGHTTP2_CANCEL, NGHTTP2_NO_ERROR, NGHTTP2_INTERNAL_ERROR, NGHTTP2_REFUSED_STREAM } = http2.constants;
  const cases: [string, Frame[], Code | "ok"][] = [
    ["two messages and their trailers", [headers, message, message, trailers], "ok"],
    ["messages, trailers, then a reset", [headers, message, trailers, rst(NGHTTP2_CANCEL)], "ok"],
    ["a message, then CANCEL", [headers, message, rst(NGHTTP2_CANCEL)], Code.Canceled],
    ["headers, then CANCEL", [headers, rst(NGHTTP2_CANCEL)], Code.Canceled],
    ["a message, then NO_ERROR", [headers, message, rst(NGHTTP2_NO_ERROR)], Code.Internal],
    ["a message, then INTERNAL_ERROR", [headers, message, rst(NGHTTP2_INTERNAL_ERROR)], Code.Internal],
    ["headers, then REFUSED_STREAM", [headers, rst(NGHTTP2_REFUSED_STREAM)], Code.Internal],
    ["a message ending the stream, no trailers", [headers, { ...message, endStream: true }], Code.Internal],
    ["no message and OK trailers", [headers, trailers], "ok"],
    [
      "a message, then an error status in the trailers",
      [headers, message, { type: "headers", headers: [["grpc-status", "5"]], endStream: true }],
      Code.NotFound,
    ],
    [
      "trailers only",
      [{ type: "headers", headers: [...headers.headers, ["grpc-status", "5"]], endStream: true }],
      Code.NotFound,
    ],
    [
      "trailers only, OK",
      [{ type: "headers", headers: [...headers.headers, ["grpc-status", "0"]], endStream: true }],
      "ok",
    ],
  ];
  let server: FrameServer;
  let connection: Http2Connection;
  let lean: Transport;
  let connect: Transport;

  beforeAll(async () => {
    server = await startFrameServer();
    connection = await connectTo(server.address);
    lean = createEndpointTransport(connection, {});
    connect = createEndpointTransport(connection, { unaryCalls: "connect" });
  });

  afterAll(async () => {
    connection.close();
    await server.close();
  });

  it.each(cases)("%s", async (_, frames, expected) => {
    server.answer(frames);
    const call = (transport: Transport) =>
      outcomeOf(transport.stream(SERVER_STREAM, undefined, undefined, undefined, one("")) as Promise<StreamResponse>);
    const outcome = await call(lean);
    expect(outcome).toEqual(await call(connect));
    const end = "failed" in outcome ? outcome.failed : outcome.ended;
    expect(end === "ok" ? "ok" : "code" in end ? end.code : end.thrown).toBe(expected);
  });

  it("resets the stream with CANCEL when the caller stops reading", async () => {
    let closed!: (code: number) => void;
    const reset = new Promise<number>((resolve) => {
      closed = resolve;
    });
    const backend = await startHttp2Backend((stream) => {
      stream.on("close", () => closed(stream.rstCode));
      stream.respond(GRPC_HEADERS);
      stream.write(Buffer.from(Uint8Array.of(0, 0, 0, 0, 3, 10, 1, 120)));
    });
    const reading = await connectTo(backend.address);
    try {
      const response = await createEndpointTransport(reading, {}).stream(
        SERVER_STREAM,
        undefined,
        undefined,
        undefined,
        one(""),
      );
      for await (const _ of response.message) break;
      expect(await reset).toBe(NGHTTP2_CANCEL);
    } finally {
      reading.close();
      await backend.close();
    }
  });
});
