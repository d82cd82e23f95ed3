// A44 retries of streaming calls over real HTTP/2, on A6's rules: an attempt is retried until the server sends
// response headers (a Trailers-Only error is retried), the request messages sent so far are sent again from the
// retry buffer, and a call whose messages outgrow the buffer is committed. A backend written on node:http2 scripts
// each attempt's answer; the route retries UNAVAILABLE twice.
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ManagementServer } from "@xdskit/control-plane";
import { RetryPolicySchema } from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import type { RouteConfiguration } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport, type XdsTransportOptions } from "../src/index.js";
import { echoClient, values } from "./support/echo-client.js";
import { clientFor, simpleSnapshot, startControlPlane } from "./support/harness.js";
import { type RawAnswer, type RawGrpcBackend, startRawGrpcBackend } from "./support/raw-grpc-backend.js";

const ms = (n: number) => create(DurationSchema, { nanos: n * 1_000_000 });
const UNAVAILABLE: RawAnswer = { code: Code.Unavailable, message: "try again" };
const TRAILERS_ONLY_UNAVAILABLE: RawAnswer = { ...UNAVAILABLE, trailersOnly: true };

describe("A44 retries of streaming calls", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let backend: RawGrpcBackend;
  let transport: XdsTransport | undefined;

  beforeAll(async () => {
    [server, backend] = await Promise.all([startControlPlane(), startRawGrpcBackend()]);
    const resources = simpleSnapshot("streams", "streams-cluster", [{ zone: "z", endpoints: [backend.address] }]);
    const action = (resources[1] as RouteConfiguration).virtualHosts[0]?.routes[0]?.action;
    if (action?.case !== "route") throw new Error("route action expected");
    action.value.retryPolicy = create(RetryPolicySchema, {
      retryOn: "unavailable",
      numRetries: 2,
      retryBackOff: { baseInterval: ms(1), maxInterval: ms(2) },
    });
    server.setSnapshot(resources);
    client = clientFor(server);
  });
  afterEach(async () => {
    await transport?.close();
    transport = undefined;
  });
  afterAll(async () => {
    await client.close();
    await Promise.all([backend.close(), server.close()]);
  });

  /** An Echo client whose attempts the backend answers with `answer(attempt)`; `seen()`: each attempt's request. */
  function echoAnswering(answer: (attempt: number) => RawAnswer, options: Partial<XdsTransportOptions> = {}) {
    transport = createXdsTransport({ target: "xds:///streams", client, ...options });
    const first = backend.requests.length;
    backend.answer((request) => answer(request.index - first));
    const seen = () =>
      backend.requests.slice(first).map((r) => ({
        previous: r.headers["grpc-previous-rpc-attempts"] as string | undefined,
        values: r.values,
      }));
    return { echo: echoClient(transport), seen, attempted: (count: number) => backend.requested(first + count) };
  }

  async function collect(stream: AsyncIterable<{ value: string }>): Promise<string[] | Code> {
    const out: string[] = [];
    try {
      for await (const message of stream) out.push(message.value);
      return out;
    } catch (error) {
      return ConnectError.from(error).code;
    }
  }

  it("retries a server-streaming call failed Trailers-Only, sending its request again", async () => {
    const { echo, seen } = echoAnswering((attempt) =>
      attempt === 1 ? TRAILERS_ONLY_UNAVAILABLE : { code: 0, messages: ["one", "two"] },
    );
    expect(await collect(echo.serverStream({ value: "req" }))).toEqual(["one", "two"]);
    expect(seen()).toEqual([
      { previous: undefined, values: ["req"] },
      { previous: "1", values: ["req"] },
    ]);
  });

  it("sends a client stream's messages again from the buffer, and the rest once read", async () => {
    // The first attempt fails after two messages while the caller's stream is still going.
    const { echo, seen, attempted } = echoAnswering((attempt) =>
      attempt === 1 ? { ...TRAILERS_ONLY_UNAVAILABLE, afterMessages: 2 } : { code: 0, messages: ["done"] },
    );
    let produced = 0;
    async function* requests() {
      for (const value of ["a", "b", "c", "d"]) {
        produced++;
        yield { value };
        // The later messages come only after the first attempt failed.
        if (value === "b") await attempted(2);
      }
    }
    const response = await echo.clientStream(requests() as never);
    expect(response.value).toBe("done");
    expect(produced).toBe(4);
    expect(seen()).toEqual([
      { previous: undefined, values: ["a", "b"] },
      { previous: "1", values: ["a", "b", "c", "d"] },
    ]);
  });

  it("sends a stream the server refused (REFUSED_STREAM) again at once, not as a counted attempt", async () => {
    const { echo, seen } = echoAnswering((attempt) =>
      attempt === 1 ? { code: 0, refuse: true } : { code: 0, messages: ["ok"] },
    );
    expect(await collect(echo.bidiStream(values("x")))).toEqual(["ok"]);
    expect(seen().map((s) => s.previous)).toEqual([undefined, undefined]);
    expect(seen()[1]?.values).toEqual(["x"]);
  });

  it("does not retry a stream whose server sent response headers before UNAVAILABLE (committed)", async () => {
    const { echo, seen } = echoAnswering(() => ({ ...UNAVAILABLE, messages: ["partial"] }));
    expect(await collect(echo.bidiStream(values("x", "y")))).toBe(Code.Unavailable);
    expect(seen()).toEqual([{ previous: undefined, values: ["x", "y"] }]);
    // Headers alone commit it too.
    const headersOnly = echoAnswering(() => UNAVAILABLE);
    expect(await collect(headersOnly.echo.serverStream({ value: "x" }))).toBe(Code.Unavailable);
    expect(headersOnly.seen()).toHaveLength(1);
  });

  it("does not retry a stream whose messages outgrew the retry buffer", async () => {
    const { echo, seen } = echoAnswering(() => TRAILERS_ONLY_UNAVAILABLE, {
      retryBufferLimits: { perCallBytes: 8 },
    });
    await expect(echo.clientStream(values("0123456789"))).rejects.toMatchObject({ code: Code.Unavailable });
    expect(seen()).toEqual([{ previous: undefined, values: ["0123456789"] }]);
    // Within the buffer, the same call is retried.
    const small = echoAnswering(() => TRAILERS_ONLY_UNAVAILABLE, { retryBufferLimits: { perCallBytes: 64 } });
    await expect(small.echo.clientStream(values("0123456789"))).rejects.toMatchObject({ code: Code.Unavailable });
    expect(small.seen().map((s) => s.previous)).toEqual([undefined, "1", "2"]);
  });
});
