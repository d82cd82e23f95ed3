// Frames that are not DiscoveryResponses at all, sent to a real client over real HTTP/2 by a raw gRPC server: the
// client's transport fails the stream, and the client must treat that like any stream ending after a response.
//
// Steps: (1) start the raw server and a client watching cluster "c"; (2) per case: take the client's new stream,
// answer its subscription with cluster "c" (version "1"), wait for the ACK, then write the case's garbage (a message
// that does not parse as a DiscoveryResponse, a valid one with a random flags byte, a message cut short, or bytes
// that are not a gRPC frame) and end the response without trailers; (3) expect the client to open a new stream at
// once, subscribing to "c" with version "1" and no nonce; (4) throughout, the watcher sees only cluster "c", and
// nothing is logged as an error.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { buildCluster } from "@xdskit/control-plane";
import { ClusterSchema } from "@xdskit/protos/envoy/config/cluster/v3/cluster_pb";
import { DiscoveryResponseSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type ClusterUpdate,
  clusterResourceType,
  createXdsClient,
  type ResourceResult,
  type XdsClient,
} from "../../src/index.js";
import { errorLogger } from "./error-logger.js";
import { applyMutations, mutationsArb } from "./mutations.js";
import { type RawAdsServer, type RawStream, startRawAdsServer } from "./raw-ads-server.js";
import { fuzzParameters, fuzzTimeoutMs } from "./settings.js";

const CDS = clusterResourceType.typeUrl;
const VALID = toBinary(
  DiscoveryResponseSchema,
  create(DiscoveryResponseSchema, {
    typeUrl: CDS,
    versionInfo: "1",
    nonce: "valid",
    resources: [anyPack(ClusterSchema, buildCluster({ name: "c" }))],
  }),
);

type Garbage =
  | { readonly kind: "unparsable"; readonly bytes: Uint8Array }
  | { readonly kind: "flags"; readonly flags: number }
  | { readonly kind: "truncated"; readonly keep: number }
  | { readonly kind: "not-a-frame"; readonly bytes: Uint8Array };

const garbageArb: fc.Arbitrary<Garbage> = fc.oneof(
  mutationsArb
    .map((mutations) => applyMutations(VALID, mutations))
    .filter((bytes) => {
      try {
        fromBinary(DiscoveryResponseSchema, bytes);
        return false;
      } catch {
        return true;
      }
    })
    .map((bytes) => ({ kind: "unparsable" as const, bytes })),
  fc.integer({ min: 1, max: 255 }).map((flags) => ({ kind: "flags" as const, flags })),
  fc.integer({ min: 0, max: VALID.length - 1 }).map((keep) => ({ kind: "truncated" as const, keep })),
  fc.uint8Array({ minLength: 1, maxLength: 4 }).map((bytes) => ({ kind: "not-a-frame" as const, bytes })),
);

function send(stream: RawStream, garbage: Garbage): void {
  switch (garbage.kind) {
    case "unparsable":
      stream.sendMessage(garbage.bytes);
      break;
    case "flags":
      stream.sendMessage(VALID, garbage.flags);
      break;
    case "truncated": {
      const prefix = Buffer.alloc(5);
      prefix.writeUInt32BE(VALID.length, 1);
      stream.sendRaw(Buffer.concat([prefix, VALID.subarray(0, garbage.keep)]));
      break;
    }
    case "not-a-frame":
      stream.sendRaw(garbage.bytes);
      break;
  }
  stream.end();
}

let server: RawAdsServer;
let client: XdsClient;
const results: ResourceResult<ClusterUpdate>[] = [];
const ambient: unknown[] = [];
const errorLogs: string[] = [];
let stream: RawStream;

/** Answers the subscription on the client's next stream with the valid response, and waits for its ACK. */
async function serveNextStream(): Promise<void> {
  stream = await server.nextStream();
  const subscription = await stream.nextRequest();
  expect(subscription).toMatchObject({ typeUrl: CDS, resourceNames: ["c"], responseNonce: "" });
  expect(subscription.versionInfo).toBe(stream.id === 1 ? "" : "1");
  stream.sendMessage(VALID);
  const ack = await stream.nextRequest();
  expect(ack).toMatchObject({ typeUrl: CDS, versionInfo: "1", responseNonce: "valid" });
  expect(ack.errorDetail).toBeUndefined();
}

beforeAll(async () => {
  server = await startRawAdsServer();
  client = createXdsClient({
    bootstrap: { xds_servers: [{ server_uri: server.address, channel_creds: [{ type: "insecure" }] }] },
    env: {},
    logger: errorLogger(errorLogs),
  });
  client.watch(clusterResourceType, "c", {
    onResourceChanged: (result) => void results.push(result),
    onAmbientError: (error) => void ambient.push(error),
  });
  await serveNextStream();
});

afterAll(async () => {
  await client.close();
  await server.close();
});

it(
  "after garbage on a stream that had a response, the client reconnects at once and its watcher sees nothing",
  async () => {
    await fc.assert(
      fc.asyncProperty(garbageArb, async (garbage) => {
        send(stream, garbage);
        await serveNextStream();
      }),
      fuzzParameters(60, 20),
    );
    expect(results.length).toBeGreaterThan(0);
    for (const result of results) expect(result.ok && result.resource.name).toBe("c");
    expect(ambient).toEqual([]);
    expect(errorLogs).toEqual([]);
  },
  fuzzTimeoutMs,
);
