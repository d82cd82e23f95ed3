// A request's `grpc-timeout` over real HTTP/2, from a raw client (which enforces nothing itself, so what ends a call
// is the server): ADS and LRS calls end with DEADLINE_EXCEEDED when it elapses, a call without one is left alone, a
// timeout past Node's timer limit does not fire early, and a malformed one is refused with INVALID_ARGUMENT (as
// Connect refuses one on the server's other services).

import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import {
  DeltaDiscoveryRequestSchema,
  DeltaDiscoveryResponseSchema,
  DiscoveryRequestSchema,
  DiscoveryResponseSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { LoadStatsRequestSchema } from "@xdskit/protos/envoy/service/load_stats/v3/lrs_pb";
import { afterEach, describe, expect, test } from "vitest";
import { buildCluster, CDS_TYPE_URL, createManagementServer } from "../src/index.js";
import {
  DELTA_PATH,
  grpcFrame,
  LRS_PATH,
  type RawStream,
  rawSession,
  rawStream,
  SOTW_PATH,
  waitForMessages,
} from "./raw-grpc.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function started() {
  const server = await createManagementServer();
  cleanups.push(() => server.close());
  server.setResource(buildCluster({ name: "c1" }));
  const session = rawSession(server.url);
  cleanups.push(() => session.destroy());
  return { server, session };
}

const sotwRequest = grpcFrame(
  toBinary(DiscoveryRequestSchema, create(DiscoveryRequestSchema, { node: { id: "n" }, typeUrl: CDS_TYPE_URL })),
);
const deltaRequest = grpcFrame(
  toBinary(
    DeltaDiscoveryRequestSchema,
    create(DeltaDiscoveryRequestSchema, { node: { id: "n" }, typeUrl: CDS_TYPE_URL }),
  ),
);

/** ACKs the latest response on a raw stream (flow control holds the next one until then). */
function ack(raw: RawStream, path: string): void {
  const last = raw.messages.at(-1)!;
  const request =
    path === SOTW_PATH
      ? toBinary(
          DiscoveryRequestSchema,
          create(DiscoveryRequestSchema, {
            typeUrl: CDS_TYPE_URL,
            versionInfo: fromBinary(DiscoveryResponseSchema, last).versionInfo,
            responseNonce: fromBinary(DiscoveryResponseSchema, last).nonce,
          }),
        )
      : toBinary(
          DeltaDiscoveryRequestSchema,
          create(DeltaDiscoveryRequestSchema, {
            typeUrl: CDS_TYPE_URL,
            responseNonce: fromBinary(DeltaDiscoveryResponseSchema, last).nonce,
          }),
        );
  raw.stream.write(grpcFrame(request));
}

describe("an ADS call with a grpc-timeout", () => {
  test.each([
    ["SotW", SOTW_PATH, sotwRequest],
    ["delta", DELTA_PATH, deltaRequest],
  ])("%s: served until it elapses, then ended with DEADLINE_EXCEEDED", async (_label, path, request) => {
    // Steps: a raw client opens a stream with grpc-timeout 300m and a plain one beside it, subscribes to CDS on both
    // and gets the cluster; the first stream ends with DEADLINE_EXCEEDED no sooner than 300 ms after it opened (the
    // hook says why), while the other is still open and still served a change.
    const { server, session } = await started();
    const openedAt = Date.now();
    const timed = rawStream(session, path, { headers: { "grpc-timeout": "300m" } });
    const plain = rawStream(session, path);
    timed.stream.write(request);
    plain.stream.write(request);
    await waitForMessages(timed, 1);
    await waitForMessages(plain, 1);

    const outcome = await timed.closed;
    expect(Date.now() - openedAt).toBeGreaterThanOrEqual(290);
    expect(outcome.status).toBe(Code.DeadlineExceeded);
    expect(outcome.message).toBe("deadline exceeded: the call's grpc-timeout (300m) elapsed");
    const closed = await server.hooks.waitForStreamClose((event) => event.reason === "deadline-exceeded");
    expect(closed).toMatchObject({ code: Code.DeadlineExceeded, kind: path === SOTW_PATH ? "sotw" : "delta" });

    ack(plain, path);
    server.setResource(buildCluster({ name: "c2" }));
    await waitForMessages(plain, 2);
    expect(plain.stream.closed).toBe(false);
  });

  test("a timeout past Node's timer limit (99999999H) does not end the call early", async () => {
    // Steps: a stream with the longest grpc-timeout there is (about 11,400 years: Node's own timer would fire it
    // after 1 ms) gets its cluster, and 200 ms later a change too, still open.
    const { server, session } = await started();
    const raw = rawStream(session, SOTW_PATH, { headers: { "grpc-timeout": "99999999H" } });
    raw.stream.write(sotwRequest);
    await waitForMessages(raw, 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    ack(raw, SOTW_PATH);
    server.setResource(buildCluster({ name: "c2" }));
    await waitForMessages(raw, 2);
    expect(raw.stream.closed).toBe(false);
  });

  test.each(["abc", "123456789S", "10x", "1.5S", "1s", ""])(
    "a malformed grpc-timeout %j is refused with INVALID_ARGUMENT",
    async (value) => {
      const { server, session } = await started();
      const raw = rawStream(session, SOTW_PATH, { headers: { "grpc-timeout": value } });
      raw.stream.write(sotwRequest);
      const outcome = await raw.closed;
      expect(outcome.status).toBe(Code.InvalidArgument);
      expect(outcome.message).toBe(`malformed grpc-timeout "${value}"`);
      expect(outcome.messages).toEqual([]);
      // Refused before it became a stream: no stream opened.
      expect(server.streams()).toEqual([]);
    },
  );
});

test("an LRS call with a grpc-timeout ends with DEADLINE_EXCEEDED when it elapses", async () => {
  // Steps: a raw client opens an LRS stream with grpc-timeout 200m and sends its first request; the server ends the
  // call with DEADLINE_EXCEEDED although the client keeps its side open.
  const { session } = await started();
  const openedAt = Date.now();
  const raw = rawStream(session, LRS_PATH, { headers: { "grpc-timeout": "200m" } });
  raw.stream.write(
    grpcFrame(
      toBinary(LoadStatsRequestSchema, create(LoadStatsRequestSchema, { node: { id: "n" }, clusterStats: [] })),
    ),
  );
  const outcome = await raw.closed;
  expect(Date.now() - openedAt).toBeGreaterThanOrEqual(190);
  expect(outcome.status).toBe(Code.DeadlineExceeded);
  expect(outcome.message).toBe("deadline exceeded: the call's grpc-timeout (200m) elapsed");
});
