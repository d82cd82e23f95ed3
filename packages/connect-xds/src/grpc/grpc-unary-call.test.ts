// The lean unary call (grpc-unary-call.ts through createEndpointTransport) against the connect path it replaces
// (connect's gRPC protocol code over connect-node's HTTP/2 client, connect-path.ts: the same transport with
// `unaryCalls: "connect"`), over real HTTP/2 on 127.0.0.1. The connect path is connect's own code but for where we
// follow gRPC instead (docs/decisions.md, connect-xds sections: the receive limit, broken connections, grpc-message,
// long deadlines), which both paths share.
// Steps: start a scripted backend (test/support/scripted-backend.ts); for each client configuration open one
// Http2Connection (READY) under a lean transport and a connect-path transport; then, for random
// (configuration, call, script), run the call on the lean transport, then on the connect path, and require the same
// outcome: the response's message, headers and trailers, or the error's class, code, raw message, metadata and
// details, and the same request read by the backend. A `date` header is left out (it differs between two calls).
// Scripts only combine faults whose outcome does not depend on how the bytes are chunked (see bodyOf).
import * as http2 from "node:http2";
import { type DescMethodUnary, toJsonString } from "@bufbuild/protobuf";
import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Transport, type UnaryResponse } from "@connectrpc/connect";
import type { Compression } from "@connectrpc/connect/protocol";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import { systemClock } from "@xdskit/orca-lrs-bridge";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EchoService } from "../../test/support/echo-service.js";
import { type Frame, type FrameServer, startFrameServer } from "../../test/support/frame-server.js";
import { type CallSpec, callAndScript } from "../../test/support/script-arbitraries.js";
import {
  type HeaderList,
  type Script,
  type ScriptedBackend,
  startScriptedBackend,
} from "../../test/support/scripted-backend.js";
import { Http2Connection } from "../connections/connection.js";
import { createEndpointTransport, type EndpointTransportOptions } from "./endpoint-transport.js";

const UNARY = EchoService.method.unary as DescMethodUnary;

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

type Outcome =
  | { ok: true; message: string; header: HeaderList; trailer: HeaderList }
  | { ok: false; code: number; rawMessage: string; message: string; metadata: HeaderList; details: string[] }
  | { ok: false; thrown: string };

const entries = (headers: Headers): HeaderList => [...headers].filter(([name]) => name !== "date");

async function outcomeOf(call: Promise<UnaryResponse>): Promise<Outcome> {
  try {
    const response = await call;
    return {
      ok: true,
      message: toJsonString(StringValueSchema, response.message as never),
      header: entries(response.header),
      trailer: entries(response.trailer),
    };
  } catch (error) {
    if (!(error instanceof ConnectError)) return { ok: false, thrown: `${(error as Error).name}: ${String(error)}` };
    return {
      ok: false,
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
}

describe("lean unary calls", () => {
  let backend: ScriptedBackend;
  const pairs: Pair[] = [];

  beforeAll(async () => {
    backend = await startScriptedBackend();
    for (const config of CONFIGS) {
      let ready!: () => void;
      const reached = new Promise<void>((resolve) => {
        ready = resolve;
      });
      const connection = new Http2Connection({
        address: backend.address,
        clock: systemClock,
        random: Math.random,
        onStateChange: (state) => state === "READY" && ready(),
      });
      connection.requestConnection();
      await reached;
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
  /** Runs one call on `transport` against `script`; `abortOnReceipt` aborts it when the backend has its headers. */
  function call(transport: Transport, id: string, spec: CallSpec, script: Script): Promise<Outcome> {
    const controller = new AbortController();
    if (spec.abort === "before") controller.abort(spec.reason);
    backend.set(id, script, spec.abort === "on-receipt" ? () => controller.abort(spec.reason) : undefined);
    const headers = new Headers(spec.headers as [string, string][]);
    headers.set("x-script", id);
    return outcomeOf(
      transport.unary(UNARY, spec.abort === undefined ? undefined : controller.signal, spec.timeoutMs, headers, {
        value: spec.value,
      }) as Promise<UnaryResponse>,
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
          // A call the client ended (deadline, signal) resets the stream with the same code both ways.
          const resets = script.kind === "hang" ? await backend.resets(id, 2) : [];
          backend.forget(id);
          expect(lean).toEqual(connect);
          expect(resets[0]).toBe(resets[1]);
          // The backend got the same request twice: always when the call succeeded; when it failed, whenever the
          // backend's handler saw both (a backend that fails early may not read the request). Not for a backend
          // that never answers: a short deadline may end the call before a compressed request was written.
          if (lean.ok) expect(seen).toHaveLength(2);
          if (seen.length === 2 && script.kind !== "hang") expect(seen[0]).toEqual(seen[1]);
        },
      ),
      { numRuns: 400 },
    );
  }, 120_000);
});

describe("lean unary calls, frame by frame", () => {
  // Frame sequences node:http2's server API does not send (a reset right after the response's DATA, among others):
  // each call must end on the lean transport as on the connect path, with the code pinned here.
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
    ["a message and its trailers", [headers, message, trailers], "ok"],
    ["a message, trailers, then a reset", [headers, message, trailers, rst(NGHTTP2_CANCEL)], "ok"],
    ["a message, then CANCEL", [headers, message, rst(NGHTTP2_CANCEL)], Code.Canceled],
    ["headers, then CANCEL", [headers, rst(NGHTTP2_CANCEL)], Code.Canceled],
    ["a message, then NO_ERROR", [headers, message, rst(NGHTTP2_NO_ERROR)], Code.Internal],
    ["a message, then INTERNAL_ERROR", [headers, message, rst(NGHTTP2_INTERNAL_ERROR)], Code.Internal],
    ["headers, then REFUSED_STREAM", [headers, rst(NGHTTP2_REFUSED_STREAM)], Code.Internal],
    ["a message ending the stream, no trailers", [headers, { ...message, endStream: true }], Code.Internal],
    [
      "a message the accepted compression fails to decompress",
      [
        { type: "headers", headers: [...headers.headers, ["grpc-encoding", "broken"]] },
        { type: "data", bytes: Uint8Array.of(1, 0, 0, 0, 1, 0) },
        trailers,
      ],
      Code.Unknown,
    ],
    [
      "trailers only",
      [{ type: "headers", headers: [...headers.headers, ["grpc-status", "5"]], endStream: true }],
      Code.NotFound,
    ],
  ];
  let server: FrameServer;
  let connection: Http2Connection;
  let lean: Transport;
  let connect: Transport;

  beforeAll(async () => {
    server = await startFrameServer();
    let ready!: () => void;
    const reached = new Promise<void>((resolve) => {
      ready = resolve;
    });
    connection = new Http2Connection({
      address: server.address,
      clock: systemClock,
      random: Math.random,
      onStateChange: (state) => state === "READY" && ready(),
    });
    connection.requestConnection();
    await reached;
    const options = { acceptCompression: [broken, compressionGzip, compressionBrotli] };
    lean = createEndpointTransport(connection, options);
    connect = createEndpointTransport(connection, { ...options, unaryCalls: "connect" });
  });

  afterAll(async () => {
    connection.close();
    await server.close();
  });

  it.each(cases)("%s", async (_, frames, expected) => {
    server.answer(frames);
    const call = (transport: Transport) =>
      outcomeOf(transport.unary(UNARY, undefined, undefined, undefined, { value: "" }) as Promise<UnaryResponse>);
    const outcome = await call(lean);
    expect(outcome).toEqual(await call(connect));
    expect(outcome.ok ? "ok" : "code" in outcome ? outcome.code : outcome.thrown).toBe(expected);
  });
});
