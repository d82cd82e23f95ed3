// Hostile requests meet documented limits: too many names, names of megabytes, node metadata nested too deeply,
// too many types on one stream. Each ends its stream with a status naming the limit; the server serves the others.
import { fromBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { Code } from "@connectrpc/connect";
import { NodeSchema } from "@xdskit/protos/envoy/config/core/v3/base_pb";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import {
  buildCluster,
  CDS_TYPE_URL,
  createManagementServer,
  DEFAULT_LIMITS,
  type ManagementServer,
} from "../src/index.js";
import { createHarness, type Harness } from "./ads-client.js";
import { grpcFrame, rawSession, rawStream } from "./raw-grpc.js";
import { subscribe } from "./util.js";

let server: ManagementServer;
let h: Harness;
let good: Awaited<ReturnType<typeof subscribe>>;

async function start(options: Parameters<typeof createManagementServer>[0] = {}): Promise<void> {
  await server?.close();
  h?.cleanup();
  server = await createManagementServer(options);
  h = createHarness(server.url);
  server.setResources([buildCluster({ name: "c1" }), buildCluster({ name: "c2" })]);
  good = await subscribe(server, h, CDS_TYPE_URL, ["c1"]);
}

beforeEach(() => start());
afterEach(async () => {
  h.cleanup();
  await server.close();
});

/** The well-behaved stream opened before each test still gets changes. */
async function othersStillServed(): Promise<void> {
  server.setResource(buildCluster({ name: "c1", edsServiceName: "changed" }));
  expect((await good.s.next()).resources).toHaveLength(1);
}

async function refusedWith(send: (s: ReturnType<Harness["sotw"]>) => Promise<void>) {
  const s = h.sotw();
  await send(s).catch(() => {});
  const error = await s.ended(10_000);
  return { code: error?.code, message: error?.rawMessage };
}

describe("resource names", () => {
  test(`a request naming 100,000 resources passes maxResourceNamesPerType (default ${DEFAULT_LIMITS.maxResourceNamesPerType})`, async () => {
    const names = Array.from({ length: 100_000 }, (_, i) => `n${i}`);
    expect(
      await refusedWith((s) => s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: names })),
    ).toEqual({
      code: Code.ResourceExhausted,
      message: `DiscoveryRequest for ${CDS_TYPE_URL} names 100000 resources, more than maxResourceNamesPerType (50000)`,
    });
    await othersStillServed();
  }, 60_000); // 100,000 names encoded and read: 6 s in npm test with the machine busy

  test("a delta subscription growing past maxResourceNamesPerType is refused on the request that passes it", async () => {
    await start({ maxResourceNamesPerType: 100 });
    const d = h.delta();
    const batch = (from: number) => Array.from({ length: 40 }, (_, i) => `n${from + i}`);
    await d.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNamesSubscribe: batch(0) });
    await d.send({ typeUrl: CDS_TYPE_URL, resourceNamesSubscribe: batch(40) });
    await d.send({ typeUrl: CDS_TYPE_URL, resourceNamesSubscribe: batch(80) }).catch(() => {});
    const error = await d.ended();
    expect([error?.code, error?.rawMessage]).toEqual([
      Code.ResourceExhausted,
      `DeltaDiscoveryRequest for ${CDS_TYPE_URL} names 120 resources, more than maxResourceNamesPerType (100)`,
    ]);
    const requests = server.hooks.requests().filter((r) => r.kind === "delta");
    expect(requests).toHaveLength(2);
    await othersStillServed();
  });

  test(`a name of a megabyte passes maxResourceNameBytes (default ${DEFAULT_LIMITS.maxResourceNameBytes})`, async () => {
    const name = "x".repeat(1024 * 1024);
    expect(
      await refusedWith((s) => s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: ["c1", name] })),
    ).toEqual({
      code: Code.ResourceExhausted,
      message: `DiscoveryRequest for ${CDS_TYPE_URL} names a resource longer than maxResourceNameBytes (8192 bytes)`,
    });
    await othersStillServed();
  });

  test("a delta request naming resources only in initial_resource_versions has those names checked too", async () => {
    const d = h.delta();
    const initialResourceVersions = { ["x".repeat(9000)]: "1" };
    await d.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, initialResourceVersions }).catch(() => {});
    const error = await d.ended();
    expect([error?.code, error?.rawMessage]).toEqual([
      Code.ResourceExhausted,
      `DeltaDiscoveryRequest for ${CDS_TYPE_URL} names a resource longer than maxResourceNameBytes (8192 bytes)`,
    ]);
    await othersStillServed();
  });

  test("the limit counts UTF-8 bytes: a name of 3,000 three-byte characters is too long for 8 KiB", async () => {
    const name = "€".repeat(3000);
    const { code } = await refusedWith((s) =>
      s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: [name] }),
    );
    expect(code).toBe(Code.ResourceExhausted);
    const fits = "€".repeat(2730);
    const s = h.sotw();
    await s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceNames: [fits, "c2"] });
    expect((await s.next()).resources).toHaveLength(1);
  });

  test("a resource locator's dynamic parameters count against it, keys and values together", async () => {
    const dynamicParameters = { zone: "z".repeat(4096), env: "e".repeat(4096) };
    expect(
      await refusedWith((s) =>
        s.send({ node: { id: "n" }, typeUrl: CDS_TYPE_URL, resourceLocators: [{ name: "c1", dynamicParameters }] }),
      ),
    ).toEqual({
      code: Code.ResourceExhausted,
      message: `DiscoveryRequest for ${CDS_TYPE_URL} has a resource locator whose dynamic parameters are longer than maxResourceNameBytes (8192 bytes)`,
    });
    await othersStillServed();
  });

  test("a type URL is a name too", async () => {
    expect(
      await refusedWith((s) => s.send({ node: { id: "n" }, typeUrl: `type.googleapis.com/${"t".repeat(9000)}` })),
    ).toEqual({
      code: Code.ResourceExhausted,
      message: "DiscoveryRequest has a type_url longer than maxResourceNameBytes (8192 bytes)",
    });
  });
});

describe("types per stream", () => {
  test(`the type after maxTypesPerStream (default ${DEFAULT_LIMITS.maxTypesPerStream}) is refused`, async () => {
    const typeUrl = (i: number) => `type.googleapis.com/test.Type${i}`;
    const result = await refusedWith(async (s) => {
      for (let i = 0; i <= 64; i++) await s.send({ ...(i === 0 ? { node: { id: "n" } } : {}), typeUrl: typeUrl(i) });
    });
    expect(result).toEqual({
      code: Code.ResourceExhausted,
      message: `DiscoveryRequest for ${typeUrl(64)} is for a type beyond maxTypesPerStream (64 types on one stream)`,
    });
    await othersStillServed();
  });
});

/**
 * A Struct nested `depth` levels (`{}` is 1), as bytes: `{a: {a: ... {}}}`, each level `Struct.fields` entry "a" ->
 * `Value.struct_value`. Sizes are worked out from the inside, then the prefixes are written from the outside into one
 * buffer, so any depth costs linear time.
 */
function nestedStruct(depth: number): Uint8Array {
  const varint = (n: number): number[] => {
    const out: number[] = [];
    for (; n >= 0x80; n = Math.floor(n / 0x80)) out.push((n % 0x80) | 0x80);
    out.push(n);
    return out;
  };
  const prefixes: number[][] = [];
  let size = 0; // of the innermost Struct: {}
  for (let level = 1; level < depth; level++) {
    const value = [0x2a, ...varint(size)]; // Value.struct_value
    const valueSize = value.length + size;
    const entry = [0x0a, 0x01, 0x61, 0x12, ...varint(valueSize)]; // key "a", value
    const entrySize = entry.length + valueSize;
    const struct = [0x0a, ...varint(entrySize)]; // Struct.fields
    prefixes.push([...struct, ...entry, ...value]);
    size = struct.length + entrySize;
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const prefix of prefixes.reverse()) {
    out.set(prefix, offset);
    offset += prefix.length;
  }
  return out;
}

/** A DiscoveryRequest for CDS whose node's metadata is `metadata`. */
function requestWithMetadata(metadata: Uint8Array): Uint8Array {
  const node = new BinaryWriter()
    .tag(1, WireType.LengthDelimited)
    .string("deep")
    .tag(3, WireType.LengthDelimited)
    .bytes(metadata)
    .finish();
  return new BinaryWriter()
    .tag(2, WireType.LengthDelimited)
    .bytes(node)
    .tag(4, WireType.LengthDelimited)
    .string(CDS_TYPE_URL)
    .tag(3, WireType.LengthDelimited)
    .string("c1")
    .finish();
}

async function rawOutcome(message: Uint8Array) {
  const session = rawSession(server.url);
  try {
    const raw = rawStream(session);
    raw.stream.write(grpcFrame(message));
    raw.stream.end();
    const outcome = await raw.closed;
    return { status: outcome.status, message: outcome.message, responses: outcome.messages.length };
  } finally {
    session.destroy();
  }
}

describe("node metadata", () => {
  test(`nested up to maxNodeMetadataDepth (default ${DEFAULT_LIMITS.maxNodeMetadataDepth}) is served; one level more is refused`, async () => {
    expect(await rawOutcome(requestWithMetadata(nestedStruct(32)))).toEqual({
      status: 0,
      message: undefined,
      responses: 1,
    });
    expect(await rawOutcome(requestWithMetadata(nestedStruct(33)))).toEqual({
      status: Code.ResourceExhausted,
      message: "node metadata nests 33 levels, more than maxNodeMetadataDepth (32)",
      responses: 0,
    });
    await othersStillServed();
  });

  test("nested 5,000 levels deep is refused without decoding it all", async () => {
    expect(await rawOutcome(requestWithMetadata(nestedStruct(5000)))).toEqual({
      status: Code.ResourceExhausted,
      message:
        "DiscoveryRequest nests messages too deeply to decode (node metadata may nest maxNodeMetadataDepth = 32 levels)",
      responses: 0,
    });
    await othersStillServed();
  });

  test("the hand-built nesting is what it claims", () => {
    const node = new BinaryWriter().tag(3, WireType.LengthDelimited).bytes(nestedStruct(3)).finish();
    expect(fromBinary(NodeSchema, node).metadata).toEqual({ a: { a: {} } });
  });

  test("a lower maxNodeMetadataDepth is honoured", async () => {
    await start({ maxNodeMetadataDepth: 2 });
    expect((await rawOutcome(requestWithMetadata(nestedStruct(3)))).message).toBe(
      "node metadata nests 3 levels, more than maxNodeMetadataDepth (2)",
    );
  });
});

describe("options", () => {
  test("limits must be positive integers", async () => {
    await expect(createManagementServer({ maxTypesPerStream: 0 })).rejects.toThrow(
      "maxTypesPerStream must be a positive integer, got 0",
    );
    await expect(createManagementServer({ maxQueuedBytesPerStream: 1.5 })).rejects.toThrow(RangeError);
  });
});
