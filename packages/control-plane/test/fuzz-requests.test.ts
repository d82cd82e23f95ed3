// Garbage requests against a real control plane on 127.0.0.1: mutated DiscoveryRequest and DeltaDiscoveryRequest
// encodings, garbage messages, lying frame headers, compressed frames, on streams of their own. Property: the server
// never crashes, answers each stream with a clear status (never its own internal error), every response it writes
// decodes, no stream is left behind, and a well-behaved client on another stream keeps being served.
//
// A short deterministic run is part of `npm test`; a long one:
//   XDSKIT_FUZZ_RUNS=20000 XDSKIT_FUZZ_SEED=7 pnpm --filter @xdskit/control-plane fuzz
import { gzipSync } from "node:zlib";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import {
  DeltaDiscoveryRequestSchema,
  DeltaDiscoveryResponseSchema,
  DiscoveryRequestSchema,
  DiscoveryResponseSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import fc from "fast-check";
import { afterAll, beforeAll, expect, test } from "vitest";
import {
  buildCluster,
  buildClusterLoadAssignment,
  buildListener,
  CDS_TYPE_URL,
  createManagementServer,
  EDS_TYPE_URL,
  LDS_TYPE_URL,
  type ManagementServer,
  RDS_TYPE_URL,
} from "../src/index.js";
import { createHarness, type Harness } from "./ads-client.js";
import { DELTA_PATH, grpcFrame, rawSession, rawStream, SOTW_PATH } from "./raw-grpc.js";
import { subscribe } from "./util.js";

const RUNS = Number(process.env.XDSKIT_FUZZ_RUNS ?? 150);
const SEED = Number(process.env.XDSKIT_FUZZ_SEED ?? 20_241);

let server: ManagementServer;
let h: Harness;
let good: Awaited<ReturnType<typeof subscribe>>;
let session: ReturnType<typeof rawSession>;
const internalErrors: string[] = [];

beforeAll(async () => {
  server = await createManagementServer({
    historyLimit: 100,
    maxRequestBytes: 64 * 1024,
    logger: {
      error: (message) => internalErrors.push(message),
      warn: () => {},
      info: () => {},
      debug: () => {},
    },
  });
  server.setResources([
    buildCluster({ name: "c1" }),
    buildCluster({ name: "c2" }),
    buildListener({ name: "l1", routeConfigName: "r1" }),
    buildClusterLoadAssignment({ clusterName: "c1", localities: [{ endpoints: ["127.0.0.1:8080"] }] }),
  ]);
  h = createHarness(server.url);
  good = await subscribe(server, h, CDS_TYPE_URL, ["c1"], { id: "well-behaved" });
  session = rawSession(server.url);
});

afterAll(async () => {
  session?.destroy();
  h?.cleanup();
  await server?.close();
});

// --- inputs --------------------------------------------------------------------------------------------------------

const typeUrl = fc.constantFrom(CDS_TYPE_URL, LDS_TYPE_URL, RDS_TYPE_URL, EDS_TYPE_URL, "", "type.googleapis.com/x.Y");
const name = fc.oneof(fc.constantFrom("c1", "c2", "l1", "*", ""), fc.string({ maxLength: 8 }));
const node = fc.option(
  fc.record({
    id: fc.string({ maxLength: 6 }),
    cluster: fc.string({ maxLength: 6 }),
    metadata: fc.option(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 }), {
      nil: undefined,
    }),
  }),
  { nil: undefined },
);
const errorDetail = fc.option(
  fc.record({ code: fc.integer({ min: 0, max: 16 }), message: fc.string({ maxLength: 6 }) }),
  {
    nil: undefined,
  },
);

const sotwRequest = fc
  .record({
    node,
    typeUrl,
    versionInfo: fc.string({ maxLength: 4 }),
    resourceNames: fc.array(name, { maxLength: 4 }),
    responseNonce: fc.oneof(fc.constant(""), fc.integer({ min: 1, max: 9 }).map(String)),
    errorDetail,
  })
  .map((init) => toBinary(DiscoveryRequestSchema, create(DiscoveryRequestSchema, init as never)));

const deltaRequest = fc
  .record({
    node,
    typeUrl,
    resourceNamesSubscribe: fc.array(name, { maxLength: 4 }),
    resourceNamesUnsubscribe: fc.array(name, { maxLength: 2 }),
    initialResourceVersions: fc.dictionary(name, fc.string({ maxLength: 3 }), { maxKeys: 2 }),
    responseNonce: fc.oneof(fc.constant(""), fc.integer({ min: 1, max: 9 }).map(String)),
    errorDetail,
  })
  .map((init) => toBinary(DeltaDiscoveryRequestSchema, create(DeltaDiscoveryRequestSchema, init as never)));

type Mutation =
  | { readonly op: "flip"; readonly at: number; readonly bit: number }
  | { readonly op: "set"; readonly at: number; readonly byte: number }
  | { readonly op: "insert"; readonly at: number; readonly bytes: Uint8Array }
  | { readonly op: "delete"; readonly at: number; readonly count: number }
  | { readonly op: "truncate"; readonly at: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("flip" as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ op: fc.constant("set" as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ op: fc.constant("insert" as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 6 }) }),
  fc.record({ op: fc.constant("delete" as const), at: fc.nat(), count: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }),
);

function mutate(bytes: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
  let out = Uint8Array.from(bytes);
  for (const m of mutations) {
    const at = out.length === 0 ? 0 : m.at % out.length;
    if (m.op === "flip" && out.length > 0) out[at] = (out[at] as number) ^ (1 << m.bit);
    else if (m.op === "set" && out.length > 0) out[at] = m.byte;
    else if (m.op === "insert") out = Uint8Array.from([...out.subarray(0, at), ...m.bytes, ...out.subarray(at)]);
    else if (m.op === "delete") out = Uint8Array.from([...out.subarray(0, at), ...out.subarray(at + m.count)]);
    else if (m.op === "truncate") out = out.subarray(0, at);
  }
  return out;
}

/** One message's bytes: a valid request (mutated or not) of the stream's protocol, or garbage. */
const message = (valid: fc.Arbitrary<Uint8Array>) =>
  fc.oneof(
    { arbitrary: valid, weight: 2 },
    {
      arbitrary: fc.tuple(valid, fc.array(mutation, { minLength: 1, maxLength: 4 })).map(([b, m]) => mutate(b, m)),
      weight: 5,
    },
    { arbitrary: fc.uint8Array({ maxLength: 64 }), weight: 2 },
  );

/** How a message is framed: honestly, with a lying header, compressed, or not at all. */
type Framing =
  | { readonly kind: "plain" }
  | { readonly kind: "header"; readonly flag: number; readonly length: number }
  | { readonly kind: "gzip"; readonly corrupt: boolean }
  | { readonly kind: "raw" };

const framing: fc.Arbitrary<Framing> = fc.oneof(
  { arbitrary: fc.constant({ kind: "plain" as const }), weight: 6 },
  {
    arbitrary: fc.record({
      kind: fc.constant("header" as const),
      flag: fc.integer({ min: 0, max: 255 }),
      length: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 0xffffffff })),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant("gzip" as const), corrupt: fc.boolean() }), weight: 1 },
  { arbitrary: fc.constant({ kind: "raw" as const }), weight: 1 },
);

function frame(bytes: Uint8Array, how: Framing): Buffer {
  switch (how.kind) {
    case "plain":
      return grpcFrame(bytes);
    case "header":
      return withHeader(bytes, how.flag, how.length);
    case "gzip": {
      const compressed = gzipSync(bytes);
      const at = compressed.length - 6;
      if (how.corrupt && at > 6) compressed[at] = (compressed[at] as number) ^ 0xff;
      return grpcFrame(compressed, { compressed: true });
    }
    case "raw":
      return Buffer.from(bytes);
  }
}

function withHeader(bytes: Uint8Array, flag: number, length: number): Buffer {
  const header = Buffer.alloc(5);
  header[0] = flag;
  header.writeUInt32BE(length, 1);
  return Buffer.concat([header, Buffer.from(bytes)]);
}

const streamCase = fc.oneof(
  fc.record({
    protocol: fc.constant("sotw" as const),
    frames: fc.array(fc.tuple(message(sotwRequest), framing), { minLength: 1, maxLength: 3 }),
    gzipHeader: fc.boolean(),
  }),
  fc.record({
    protocol: fc.constant("delta" as const),
    frames: fc.array(fc.tuple(message(deltaRequest), framing), { minLength: 1, maxLength: 3 }),
    gzipHeader: fc.boolean(),
  }),
);

// --- the property --------------------------------------------------------------------------------------------------

/** The statuses a garbage request may get, each for a reason of the client's making. */
const CLEAR_STATUSES = new Set<number>([
  0,
  Code.InvalidArgument,
  Code.ResourceExhausted,
  Code.Unimplemented,
  Code.Internal,
]);

async function wellBehavedStillServed(round: number): Promise<void> {
  server.setResource(buildCluster({ name: "c1", edsServiceName: `round-${round}` }));
  const update = await good.s.next(5000);
  expect(update.resources).toHaveLength(1);
  await good.s.ack(update, ["c1"]);
}

test(
  `garbage requests get a clear status and leave the server serving (${RUNS} runs, seed ${SEED})`,
  async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(streamCase, async ({ protocol, frames, gzipHeader }) => {
        if (session.destroyed || session.closed) session = rawSession(server.url);
        const usesGzip = frames.some(([, how]) => how.kind === "gzip");
        const raw = rawStream(session, protocol === "sotw" ? SOTW_PATH : DELTA_PATH, {
          headers: usesGzip || gzipHeader ? { "grpc-encoding": "gzip" } : {},
        });
        for (const [bytes, how] of frames) raw.stream.write(frame(bytes, how));
        raw.stream.end();
        let timer: NodeJS.Timeout | undefined;
        const outcome = await Promise.race([
          raw.closed,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error("the server did not end the stream within 5 s")), 5000);
          }),
        ]);
        clearTimeout(timer);

        expect(outcome.httpStatus).toBe(200);
        expect(outcome.status).toBeDefined();
        expect(CLEAR_STATUSES.has(outcome.status as number)).toBe(true);
        if (outcome.status !== 0) expect(outcome.message ?? "").not.toBe("");
        expect(outcome.message ?? "").not.toMatch(/internal error in the management server/);
        if (outcome.status === Code.Internal)
          expect(outcome.message).toBe("a compressed message on a call without grpc-encoding");
        for (const bytes of outcome.messages) {
          if (protocol === "sotw") fromBinary(DiscoveryResponseSchema, bytes);
          else fromBinary(DeltaDiscoveryResponseSchema, bytes);
        }
        if (++round % 25 === 0) await wellBehavedStillServed(round);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    await wellBehavedStillServed(round + 1);
    // Only the well-behaved stream is left, and the server never logged an error of its own.
    expect(server.streams().map((s) => s.node?.id)).toEqual(["well-behaved"]);
    expect(internalErrors).toEqual([]);
  },
  RUNS * 200 + 20_000,
);
