// A6's commit rule for A44 retries over real HTTP/2: a backend written on node:http2 answers UNAVAILABLE either
// Trailers-Only (as grpc-go, grpc-java and grpc-js servers answer an error before any message) or after response
// headers (as connect-node servers answer every error). The route retries UNAVAILABLE twice.
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ManagementServer } from "@xdskit/control-plane";
import { RetryPolicySchema } from "@xdskit/protos/envoy/config/route/v3/route_components_pb";
import type { RouteConfiguration } from "@xdskit/protos/envoy/config/route/v3/route_pb";
import type { XdsClient } from "@xdskit/xds-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createXdsTransport, type XdsTransport, type XdsTransportOptions } from "../src/index.js";
import { createXdsTransportWithInternals } from "../src/internal.js";
import { echoClient } from "./support/echo-client.js";
import { clientFor, simpleSnapshot, startControlPlane } from "./support/harness.js";
import { type RawAnswer, type RawGrpcBackend, startRawGrpcBackend } from "./support/raw-grpc-backend.js";

const UNAVAILABLE: RawAnswer = { code: Code.Unavailable, message: "try elsewhere" };
const TRAILERS_ONLY_UNAVAILABLE: RawAnswer = { ...UNAVAILABLE, trailersOnly: true };
const ms = (n: number) => create(DurationSchema, { nanos: n * 1_000_000 });

describe("A6 commit rule for retries", () => {
  let server: ManagementServer;
  let client: XdsClient;
  let backend: RawGrpcBackend;
  let transport: XdsTransport | undefined;

  beforeAll(async () => {
    [server, backend] = await Promise.all([startControlPlane(), startRawGrpcBackend()]);
    const resources = simpleSnapshot("commit", "commit-cluster", [{ zone: "z", endpoints: [backend.address] }]);
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

  /** Makes one call with every attempt answered by `answer(attempt)`; returns its outcome and the attempts made. */
  async function call(
    answer: (attempt: number) => RawAnswer,
    options: Partial<XdsTransportOptions> = {},
    unaryCalls?: "connect",
  ): Promise<{ outcome: string; attempts: (string | undefined)[] }> {
    const made = { target: "xds:///commit", client, ...options };
    transport =
      unaryCalls === undefined ? createXdsTransport(made) : createXdsTransportWithInternals(made, { unaryCalls });
    const first = backend.requests.length;
    backend.answer((request) => answer(request.index - first));
    const outcome = await echoClient(transport)
      .unary({ value: "x" })
      .then(
        (response) => response.value,
        (error: unknown) => Code[ConnectError.from(error).code],
      );
    const attempts = backend.requests.slice(first).map((r) => r.headers["grpc-previous-rpc-attempts"] as string);
    return { outcome, attempts };
  }

  it("does not retry an attempt whose server sent headers before UNAVAILABLE", async () => {
    expect(await call(() => UNAVAILABLE)).toEqual({ outcome: "Unavailable", attempts: [undefined] });
  });

  it("retries a Trailers-Only UNAVAILABLE, telling each retry how many attempts came before", async () => {
    expect(await call(() => TRAILERS_ONLY_UNAVAILABLE)).toEqual({
      outcome: "Unavailable",
      attempts: [undefined, "1", "2"],
    });
    expect(
      await call((attempt) => (attempt === 1 ? TRAILERS_ONLY_UNAVAILABLE : { code: 0, messages: ["served"] })),
    ).toEqual({ outcome: "served", attempts: [undefined, "1"] });
  });

  it("retries after headers with retryAfterResponseHeaders (connect-node backends), not once a message came", async () => {
    expect(await call(() => UNAVAILABLE, { retryAfterResponseHeaders: true })).toEqual({
      outcome: "Unavailable",
      attempts: [undefined, "1", "2"],
    });
    // A message before the error status commits the attempt even so.
    expect(await call(() => ({ ...UNAVAILABLE, messages: ["partial"] }), { retryAfterResponseHeaders: true })).toEqual({
      outcome: "Unavailable",
      attempts: [undefined],
    });
  });

  it("applies the same rule on connect's unary path", async () => {
    expect(await call(() => UNAVAILABLE, {}, "connect")).toEqual({ outcome: "Unavailable", attempts: [undefined] });
    expect(await call(() => TRAILERS_ONLY_UNAVAILABLE, {}, "connect")).toEqual({
      outcome: "Unavailable",
      attempts: [undefined, "1", "2"],
    });
    expect(await call(() => UNAVAILABLE, { retryAfterResponseHeaders: true }, "connect")).toEqual({
      outcome: "Unavailable",
      attempts: [undefined, "1", "2"],
    });
    expect(
      await call(() => ({ ...UNAVAILABLE, messages: ["partial"] }), { retryAfterResponseHeaders: true }, "connect"),
    ).toEqual({ outcome: "Unavailable", attempts: [undefined] });
  });
});
