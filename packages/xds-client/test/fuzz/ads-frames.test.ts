// Whole ADS responses, mutated, sent to real clients over real HTTP/2 by @xdskit/control-plane (`injectResponse`).
//
// Steps: (1) start the control plane (it serves no resources: every response comes from the fuzzer) and two
// clients, one state-of-the-world and one delta, each watching one LDS, RDS, CDS and EDS name with recording
// watchers and a logger that keeps errors; (2) per case, build a response of one type (0-3 resources, valid or
// mutated, some wrapped in `Resource`, names watched or not), maybe mutate the serialized frame as a whole, parse it
// back as the client's transport would (frames that no longer parse are counted and not sent: connect-node fails
// the stream before the client sees them), give it a fresh nonce, and inject it; (3) expect exactly one ACK or NACK
// carrying that nonce when the client watches the type, none otherwise: a NACK when a resource of the right type
// fails to decode, an ACK when every resource decodes and the names are distinct; (4) after each case, check every
// watcher event: a resource equal to the decode of a resource sent under that name, or an XdsError; (5) at the end,
// no error was logged and each client sent exactly one request per answered response (plus its subscriptions).
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { type Any, anyPack } from "@bufbuild/protobuf/wkt";
import { createManagementServer, type ManagementServer, RESOURCE_WRAPPER_TYPE_URL } from "@xdskit/control-plane";
import {
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createXdsClient, type DecodeContext, type ResourceResult, type XdsClient, XdsError } from "../../src/index.js";
import { isDeeplyFrozen } from "../resources/context.js";
import { errorLogger } from "./error-logger.js";
import { applyMutations, type Mutation, mutationsArb } from "./mutations.js";
import { RESOURCE_KINDS, type ResourceKind } from "./resource-arbitraries.js";
import { fuzzParameters, fuzzTimeoutMs } from "./settings.js";

const WATCHED = "a";

type Protocol = "sotw" | "delta";

interface ClientUnderTest {
  readonly protocol: Protocol;
  readonly client: XdsClient;
  streamId: number;
  /** Per type URL and name: every value the type's decode accepted for a resource sent under that name. */
  readonly sent: Map<string, unknown[]>;
  readonly events: { key: string; result: ResourceResult<unknown> | { ambient: XdsError } }[];
  readonly errors: string[];
}

let server: ManagementServer;
const clients: ClientUnderTest[] = [];
/** `<stream id> <response nonce>` of every request, from when both clients are subscribed and up to date. */
const requests: string[] = [];

async function startClient(protocol: Protocol): Promise<ClientUnderTest> {
  const errors: string[] = [];
  const mark = server.hooks.mark();
  const client = createXdsClient({
    bootstrap: {
      xds_servers: [
        {
          server_uri: server.address,
          channel_creds: [{ type: "insecure" }],
          ...(protocol === "delta" ? { api_type: "DELTA_GRPC" } : {}),
        },
      ],
      node: { id: `fuzz-${protocol}` },
    },
    env: {},
    logger: errorLogger(errors),
  });
  const under: ClientUnderTest = { protocol, client, streamId: 0, sent: new Map(), events: [], errors };
  for (const kind of RESOURCE_KINDS) {
    const key = `${kind.type.typeUrl} ${WATCHED}`;
    client.watch(kind.type, WATCHED, {
      onResourceChanged: (result) => void under.events.push({ key, result }),
      onAmbientError: (error) => void under.events.push({ key, result: { ambient: error } }),
    });
  }
  const open = await server.hooks.waitForStreamOpen((e) => e.kind === protocol, { after: mark });
  under.streamId = open.streamId;
  for (const kind of RESOURCE_KINDS) {
    await server.hooks.waitForRequest((e) => e.streamId === open.streamId && e.typeUrl === kind.type.typeUrl, {
      after: mark,
    });
  }
  // The server's own answers to the subscriptions (delta sends some), and their ACKs.
  for (const response of server.hooks.responses().filter((e) => e.streamId === open.streamId)) {
    await server.hooks.waitForRequest((e) => e.streamId === open.streamId && e.responseNonce === response.nonce, {
      after: mark,
    });
  }
  return under;
}

beforeAll(async () => {
  server = await createManagementServer({ host: "127.0.0.1", port: 0, historyLimit: 200 });
  clients.push(await startClient("sotw"), await startClient("delta"));
  server.hooks.on("request", (e) => void requests.push(`${e.streamId} ${e.responseNonce}`));
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.client.close()));
  await server.close();
});

interface ResourceCase {
  readonly name: string;
  readonly bytes: Uint8Array;
  readonly mutations: readonly Mutation[] | undefined;
  readonly wrap: boolean;
}

interface FrameCase {
  readonly protocol: Protocol;
  readonly kind: ResourceKind;
  readonly resources: readonly ResourceCase[];
  readonly removed: readonly string[];
  readonly version: string;
  readonly frameMutations: readonly Mutation[] | undefined;
}

const frameArb: fc.Arbitrary<FrameCase> = fc.oneof(
  ...RESOURCE_KINDS.map((kind) =>
    fc.record({
      protocol: fc.constantFrom<Protocol>("sotw", "delta"),
      kind: fc.constant(kind),
      resources: fc.array(
        fc.constantFrom(WATCHED, WATCHED, "b", "").chain((name) =>
          fc.record({
            name: fc.constant(name),
            bytes: kind.bytes(name),
            mutations: fc.option(mutationsArb, { nil: undefined, freq: 2 }),
            wrap: fc.boolean(),
          }),
        ),
        { maxLength: 3 },
      ),
      removed: fc.array(fc.constantFrom(WATCHED, "b"), { maxLength: 1 }),
      version: fc.constantFrom("1", "2", ""),
      // A quarter of the frames are mutated as a whole.
      frameMutations: fc.oneof(
        { weight: 3, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: mutationsArb },
      ),
    }),
  ),
);

function anyOf(kind: ResourceKind, resource: ResourceCase): Any {
  const value = resource.mutations === undefined ? resource.bytes : applyMutations(resource.bytes, resource.mutations);
  return { $typeName: "google.protobuf.Any", typeUrl: kind.type.typeUrl, value };
}

/** The frame as the client will see it, or undefined when the mutated bytes no longer parse. */
function buildFrame(c: FrameCase, nonce: string): DiscoveryResponse | DeltaDiscoveryResponse | undefined {
  const typeUrl = c.kind.type.typeUrl;
  let bytes: Uint8Array;
  if (c.protocol === "sotw") {
    const resources = c.resources.map((r) =>
      r.wrap
        ? anyPack(ResourceSchema, create(ResourceSchema, { name: r.name, resource: anyOf(c.kind, r) }))
        : anyOf(c.kind, r),
    );
    bytes = toBinary(
      DiscoveryResponseSchema,
      create(DiscoveryResponseSchema, { typeUrl, versionInfo: c.version, resources }),
    );
  } else {
    const resources = c.resources.map((r) =>
      create(ResourceSchema, { name: r.name, version: c.version, resource: anyOf(c.kind, r) }),
    );
    bytes = toBinary(
      DeltaDiscoveryResponseSchema,
      create(DeltaDiscoveryResponseSchema, {
        typeUrl,
        systemVersionInfo: c.version,
        resources,
        removedResources: [...c.removed],
      }),
    );
  }
  if (c.frameMutations !== undefined) bytes = applyMutations(bytes, c.frameMutations);
  let frame: DiscoveryResponse | DeltaDiscoveryResponse;
  try {
    frame =
      c.protocol === "sotw"
        ? fromBinary(DiscoveryResponseSchema, bytes)
        : fromBinary(DeltaDiscoveryResponseSchema, bytes);
  } catch {
    return undefined;
  }
  frame.nonce = nonce;
  // The control plane needs a type URL to inject; an emptied one stands for an unknown type.
  if (frame.typeUrl === "") frame.typeUrl = "type.googleapis.com/fuzz.Unknown";
  return frame;
}

/**
 * The resources of the frame as the client unwraps them (SotW `Resource` wrappers opened), and whether they are all
 * plain: unwrapped Anys of the frame's type (the case where the oracle knows whether the client must ACK).
 */
function resourcesOf(frame: DiscoveryResponse | DeltaDiscoveryResponse): {
  entries: { name?: string; any: Any }[];
  plain: boolean;
} {
  const entries: { name?: string; any: Any }[] = [];
  let plain = true;
  for (const entry of frame.resources) {
    let name: string | undefined;
    let any: Any | undefined;
    if (entry.$typeName === "envoy.service.discovery.v3.Resource") {
      name = entry.name;
      any = entry.resource;
    } else if (entry.typeUrl === RESOURCE_WRAPPER_TYPE_URL) {
      plain = false;
      try {
        const wrapper = fromBinary(ResourceSchema, entry.value);
        name = wrapper.name;
        any = wrapper.resource;
      } catch {
        continue;
      }
    } else {
      any = entry;
    }
    if (any === undefined || any.typeUrl !== frame.typeUrl) {
      plain = false;
      continue;
    }
    entries.push(name === undefined ? { any } : { name, any });
  }
  return { entries, plain };
}

let counter = 0;
const answeredNonces: string[] = [];
const stats = { sent: 0, unparsable: 0, ignored: 0, acks: 0, nacks: 0 };

async function runCase(c: FrameCase): Promise<void> {
  const under = clients.find((x) => x.protocol === c.protocol)!;
  const nonce = `fuzz-${++counter}`;
  const frame = buildFrame(c, nonce);
  if (frame === undefined) {
    stats.unparsable++;
    return;
  }
  const kind = RESOURCE_KINDS.find((k) => k.type.typeUrl === frame.typeUrl);
  // What the type's own decode makes of each resource: the oracle for the answer and for the watchers.
  const { entries, plain } = resourcesOf(frame);
  const { bootstrap, features } = under.client;
  const context: DecodeContext = { server: bootstrap.xdsServers[0]!, bootstrap, features };
  const decoded =
    kind === undefined ? [] : entries.map(({ name, any }) => ({ name, result: kind.type.decode(any, context) }));
  for (const d of decoded) {
    const name = d.name ?? d.result.name;
    if (d.result.ok && name !== undefined) {
      const key = `${frame.typeUrl} ${name}`;
      under.sent.set(key, [...(under.sent.get(key) ?? []), d.result.value]);
    }
  }
  const mark = server.hooks.mark();
  stats.sent++;
  server.hooks.injectResponse(under.streamId, frame);
  if (kind === undefined) {
    stats.ignored++;
    return;
  }
  const answer = await server.hooks.waitForRequest((e) => e.streamId === under.streamId && e.responseNonce === nonce, {
    after: mark,
  });
  answeredNonces.push(`${under.streamId} ${nonce}`);
  expect(answer.typeUrl).toBe(frame.typeUrl);
  const nack = answer.errorDetail !== undefined;
  if (nack) {
    stats.nacks++;
    expect(answer.errorDetail?.code).toBe(3);
    expect(answer.errorDetail?.message).toMatch(/./);
  } else {
    stats.acks++;
  }
  if (plain) {
    const names = decoded.map((d) => d.name ?? (d.result.ok ? d.result.name : undefined));
    if (decoded.some((d) => !d.result.ok)) expect(nack, "a resource failed to decode").toBe(true);
    else if (new Set(names).size === names.length && names.every((n) => n !== undefined && n !== "")) {
      if (
        frame.resourceErrors.length === 0 &&
        !("removedResourceNames" in frame && frame.removedResourceNames.length > 0)
      ) {
        expect(nack, answer.errorDetail?.message).toBe(false);
      }
    }
  }
}

function checkWatcherEvents(under: ClientUnderTest): void {
  for (const { key, result } of under.events.splice(0)) {
    if ("ambient" in result) {
      expect(result.ambient).toBeInstanceOf(XdsError);
    } else if (!result.ok) {
      expect(result.error).toBeInstanceOf(XdsError);
      expect(result.error.message).toMatch(/^\[[A-Z_]+\] ./);
    } else {
      expect(isDeeplyFrozen(result.resource)).toBe(true);
      expect(typeof result.version).toBe("string");
      expect(under.sent.get(key) ?? [], `a ${key} that was never sent valid`).toContainEqual(result.resource);
    }
  }
}

describe("mutated ADS responses against real clients", () => {
  it(
    "each response of a watched type gets exactly one ACK or NACK; watchers see only decoded resources or errors",
    async () => {
      await fc.assert(
        fc.asyncProperty(frameArb, async (c) => {
          await runCase(c);
          for (const under of clients) checkWatcherEvents(under);
        }),
        fuzzParameters(120, 20),
      );
      // Let late requests and callbacks, if any, arrive before counting.
      await new Promise((resolve) => setTimeout(resolve, 50));
      for (const under of clients) {
        checkWatcherEvents(under);
        expect(under.errors).toEqual([]);
      }
      // One request per answered response, none for the others, no other request.
      expect(requests.sort()).toEqual(answeredNonces.sort());
      console.log(`mutated ADS responses: ${JSON.stringify(stats)}`);
      expect(stats.acks).toBeGreaterThan(0);
      expect(stats.nacks).toBeGreaterThan(0);
    },
    fuzzTimeoutMs,
  );
});
