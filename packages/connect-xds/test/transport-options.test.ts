// createXdsTransport's options over real HTTP/2, each against the behaviour it names: defaultTimeoutMs (the deadline
// of calls that set none, sent as grpc-timeout), retryThrottling (A6 tokens: retries stop once they fall to half),
// retryBufferLimits (a request over the per-call or the transport's limit is not retried) and jsonOptions (how
// request messages are written and responses read, on unary calls and on streams). `loadReporting` is proven in
// load-reporting.test.ts, `logger` in listeners.test.ts.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import type { ManagementServer } from "@xdskit/control-plane";
import { RetryPolicySchema } from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import type { RouteConfiguration } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport, type XdsTransportOptions } from "../src/index.js";
import { type Backend, startBackend } from "./support/backends.js";
import { echoClient } from "./support/echo-client.js";
import { JsonService } from "./support/echo-service.js";
import { clientFor, simpleSnapshot, startControlPlane } from "./support/harness.js";
import { GRPC_HEADERS, startHttp2Backend } from "./support/hostile-backends.js";
import { routeAction, seconds } from "./support/policy-config.js";
import { type ScriptedBackend, startScriptedBackend } from "./support/scripted-backend.js";

/** The code a promise fails with, or "ok". */
const outcome = (call: Promise<unknown>) =>
  call.then(
    () => "ok" as const,
    (error: unknown) => ConnectError.from(error).code,
  );

describe("transport options", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let next = 0;
  const transports: XdsTransport[] = [];
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    server = await startControlPlane();
    client = clientFor(server);
  });
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close()));
    await Promise.all(closers.splice(0).map((close) => close()));
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  /** A transport with `options` to a listener of its own whose one endpoint is `address`. */
  function transportTo(
    address: string,
    options: Partial<XdsTransportOptions> = {},
    edit: (route: RouteConfiguration) => void = () => {},
  ): XdsTransport {
    const name = `options-${next++}`;
    const resources = simpleSnapshot(name, `${name}-cluster`, [{ zone: "z", endpoints: [address] }]);
    edit(resources[1] as RouteConfiguration);
    server.setResources(resources);
    const transport = createXdsTransport({ target: `xds:///${name}`, client, ...options });
    transports.push(transport);
    return transport;
  }

  /** A backend answering every call with a Trailers-Only UNAVAILABLE (A6 may retry it), counting them. */
  async function failingBackend(): Promise<{ readonly address: string; attempts(): number }> {
    let attempts = 0;
    const backend = await startHttp2Backend((stream) => {
      attempts++;
      stream.respond({ ...GRPC_HEADERS, "grpc-status": "14", "grpc-message": "down" }, { endStream: true });
    });
    closers.push(() => backend.close());
    return { address: backend.address, attempts: () => attempts };
  }

  const retryOn = (numRetries: number) => (route: RouteConfiguration) => {
    routeAction(route).retryPolicy = create(RetryPolicySchema, {
      retryOn: "unavailable",
      numRetries,
      retryBackOff: { baseInterval: seconds(0.001), maxInterval: seconds(0.002) },
    });
  };

  it("defaultTimeoutMs: the deadline of a call without one (sent as grpc-timeout); a call's own timeout wins", async () => {
    // The default is seconds, not milliseconds: on a loaded machine a call must reach the backend well within it.
    const defaultTimeoutMs = 3_000;
    const timeouts = new Map<string, string | null>();
    const record: Interceptor = (next) => (req) => {
      if (!req.stream)
        timeouts.set((req.message as unknown as { value: string }).value, req.header.get("grpc-timeout"));
      return next(req);
    };
    const backend: Backend = await startBackend("a", { interceptors: [record] });
    closers.push(() => backend.close());
    const echo = echoClient(transportTo(backend.address, { defaultTimeoutMs }));
    // The first call waits for the configuration: give it time of its own.
    expect((await echo.unary({ value: "w" }, { timeoutMs: 10_000 })).value).toBe("a:w");
    expect((await echo.unary({ value: "x" })).value).toBe("a:x");
    const hangStarted = performance.now();
    expect(await outcome(echo.unary({ value: "hang" }))).toBe(Code.DeadlineExceeded);
    expect(performance.now() - hangStarted).toBeGreaterThanOrEqual(defaultTimeoutMs - 50);
    expect((await echo.unary({ value: "y" }, { timeoutMs: 60_000 })).value).toBe("a:y");
    const millis = (value: string) => {
      const [, amount, unit] = /^(\d+)([mS])$/.exec(timeouts.get(value) ?? "") ?? [];
      return Number(amount) * (unit === "S" ? 1000 : 1);
    };
    expect(millis("x")).toBeGreaterThan(0);
    expect(millis("x")).toBeLessThanOrEqual(defaultTimeoutMs);
    // 60 s: far above the default.
    expect(millis("y")).toBeGreaterThan(50_000);
  });

  it("retryThrottling: once the tokens fall to half of maxTokens, failures are not retried", async () => {
    const failing = await failingBackend();
    const throttled = echoClient(
      transportTo(failing.address, { retryThrottling: { maxTokens: 10, tokenRatio: 0.1 } }, retryOn(4)),
    );
    const attemptsOf = async () => {
      const before = failing.attempts();
      expect(await outcome(throttled.unary({ value: "x" }))).toBe(Code.Unavailable);
      return failing.attempts() - before;
    };
    // 10 tokens: four failures leave 6 (> 5), so the call makes its five attempts; the fifth failure leaves 5, and
    // from then on every failure is final.
    expect([await attemptsOf(), await attemptsOf(), await attemptsOf()]).toEqual([5, 1, 1]);
    // The same route without throttling retries every call.
    const unthrottled = echoClient(transportTo(failing.address, {}, retryOn(4)));
    const before = failing.attempts();
    expect(await outcome(unthrottled.unary({ value: "x" }))).toBe(Code.Unavailable);
    expect(failing.attempts() - before).toBe(5);
  });

  it("retryBufferLimits: a request over perCallBytes, or over what totalBytes has left, is sent once", async () => {
    const failing = await failingBackend();
    const echo = echoClient(
      transportTo(failing.address, { retryBufferLimits: { perCallBytes: 1024, totalBytes: 1500 } }, retryOn(2)),
    );
    const attempts = async (...values: string[]) => {
      const before = failing.attempts();
      for (const code of await Promise.all(values.map((value) => outcome(echo.unary({ value }))))) {
        expect(code).toBe(Code.Unavailable);
      }
      return failing.attempts() - before;
    };
    expect(await attempts("x".repeat(900))).toBe(3);
    expect(await attempts("x".repeat(1100))).toBe(1);
    // Two calls of 900 bytes at once: the first holds 900 of the 1500, the second does not fit.
    expect(await attempts("x".repeat(900), "y".repeat(900))).toBe(3 + 1);
    // Its bytes were given back: a call retries again.
    expect(await attempts("x".repeat(900))).toBe(3);
  });

  describe("jsonOptions", () => {
    let scripted: ScriptedBackend;
    beforeAll(async () => {
      scripted = await startScriptedBackend();
      scripted.set("json", jsonScript());
    });
    afterAll(() => scripted.close());

    /** The JSON of each request body the backend read (after its 5-byte prefix). */
    const requestsSeen = () =>
      scripted.seen("json").map((request) => Buffer.from(request.body, "hex").subarray(5).toString());

    type Json = {
      unary(r: object, o: object): Promise<{ firstName: string; count: number }>;
      serverStream(r: object, o: object): AsyncIterable<{ firstName: string; count: number }>;
    };
    const headers = { "x-script": "json" };

    /** The outcome of a unary call and of a server stream, each with one Pair. */
    const both = async (json: Json) => {
      const unary = await outcome(json.unary({ firstName: "q" }, { headers }));
      const stream = await outcome(
        (async () => {
          for await (const message of json.serverStream({ firstName: "s" }, { headers })) {
            expect(message).toMatchObject({ firstName: "a", count: 7 });
          }
        })(),
      );
      return [unary, stream];
    };

    it("writes and reads messages as they say, on unary calls and on streams", async () => {
      const json = createClient(
        JsonService,
        transportTo(scripted.address, {
          useBinaryFormat: false,
          jsonOptions: { useProtoFieldName: true, alwaysEmitImplicit: true, ignoreUnknownFields: false },
        }),
      ) as unknown as Json;
      // The answer's unknown field is refused, as ignoreUnknownFields: false says.
      expect(await both(json)).toEqual([Code.InvalidArgument, Code.InvalidArgument]);
      expect(requestsSeen().map((body) => JSON.parse(body))).toEqual([
        { first_name: "q", count: 0 },
        { first_name: "s", count: 0 },
      ]);
    });

    it("without them, connect's defaults: camelCase names, no implicit values, unknown fields ignored", async () => {
      scripted.forget("json");
      scripted.set("json", jsonScript());
      const json = createClient(
        JsonService,
        transportTo(scripted.address, { useBinaryFormat: false }),
      ) as unknown as Json;
      expect(await both(json)).toEqual(["ok", "ok"]);
      expect(requestsSeen().map((body) => JSON.parse(body))).toEqual([{ firstName: "q" }, { firstName: "s" }]);
    });
  });
});

/** The jsonOptions cases' answer: a JSON Pair with a field the message does not have. */
function jsonScript() {
  const answer = Buffer.from('{"first_name":"a","count":7,"extra":true}');
  return {
    kind: "raw" as const,
    status: 200,
    headers: [["content-type", "application/grpc+json"]] as [string, string][],
    endWithHeaders: false,
    body: [Buffer.concat([Buffer.from([0, 0, 0, 0, answer.length]), answer])],
    trailers: [["grpc-status", "0"]] as [string, string][],
  };
}
