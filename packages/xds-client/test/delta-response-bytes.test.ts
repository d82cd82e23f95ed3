// Delta responses read as DeltaResponseBytes (docs/architecture.md#the-delta-envelope): the client reads each resource
// from the bytes of its Resource, without protobuf-es when it is encoded as servers encode one. Proven against a
// transport that hands decoded DeltaDiscoveryResponses (the reading before, and a custom transport's choice): for
// random sequences of delta responses (plain, wrapped under another name, TP2 variants, undecodable payloads, payloads
// of another type, non-ASCII names, removals, TP3 errors), both clients tell their watchers, the server and CSDS the
// same things. The twin of byte-identical-skip.test.ts's transport property.
import { create, toBinary } from "@bufbuild/protobuf";
import { type Any, AnySchema, anyPack } from "@bufbuild/protobuf/wkt";
import { ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ResourceType, XdsClient } from "../src/index.js";
import { resourceError } from "./support/fake-transport.js";
import { csdsRows, setup } from "./support/harness.js";
import { flush, type RecordingWatcher, recordingWatcher, type WatchEvent } from "./support/recorder.js";
import { endpointsAny, listenerAny, testEndpointsType, testListenerType, wrappedAny } from "./support/test-types.js";

const NAMES = ["A", "B", "é", "bad"] as const;
const ENVS = ["prod", "test"] as const;

const KINDS = {
  lds: { type: testListenerType as ResourceType<unknown>, any: (n: string, v: number) => listenerAny(n, `p${v}`) },
  eds: { type: testEndpointsType as ResourceType<unknown>, any: (n: string, v: number) => endpointsAny(n, v + 1) },
};
type Kind = keyof typeof KINDS;

type Entry =
  | { readonly t: "plain"; readonly name: string; readonly v: number }
  | { readonly t: "wrapped"; readonly outer: string; readonly name: string; readonly v: number }
  | { readonly t: "variant"; readonly env: string; readonly v: number }
  | { readonly t: "garbage"; readonly bytes: readonly number[] }
  | { readonly t: "wrongType"; readonly name: string };

/** What the fake server sends for an entry: a plain Any (it wraps it in a Resource named by its content) or a Resource. */
function build(kind: Kind, entry: Entry): Any {
  const { any, type } = KINDS[kind];
  switch (entry.t) {
    case "plain":
      return any(entry.name, entry.v);
    case "wrapped":
      return wrappedAny(entry.outer, any(entry.name, entry.v));
    case "variant":
      return anyPack(
        ResourceSchema,
        create(ResourceSchema, {
          resourceName: {
            name: "V",
            dynamicParameterConstraints: {
              type: { case: "constraint", value: { key: "env", constraintType: { case: "value", value: entry.env } } },
            },
          },
          resource: any("V", entry.v),
        }),
      );
    case "garbage":
      return wrappedAny("bad", create(AnySchema, { typeUrl: type.typeUrl, value: new Uint8Array(entry.bytes) }));
    case "wrongType":
      return wrappedAny(entry.name, kind === "lds" ? endpointsAny(entry.name) : listenerAny(entry.name));
  }
}

const name = fc.constantFrom(...NAMES);
const v = fc.integer({ min: 0, max: 1 });
const entry: fc.Arbitrary<Entry> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ t: fc.constant("plain" as const), name, v }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("wrapped" as const), outer: name, name, v }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("variant" as const), env: fc.constantFrom(...ENVS), v }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant("garbage" as const), bytes: fc.constantFrom([0x0a, 0x05, 0x41], [0xff]) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("wrongType" as const), name }) },
);
const response = fc.record({
  entries: fc.array(entry, { maxLength: 6 }),
  removed: fc.array(name, { maxLength: 2 }),
  errors: fc.array(fc.record({ name: fc.constantFrom(...NAMES, "V"), code: fc.constantFrom(5, 14) }), {
    maxLength: 1,
  }),
});
const scenario = fc.record({
  kind: fc.constantFrom<Kind>("lds", "eds"),
  dataErrorHandling: fc.boolean(),
  responses: fc.array(response, { minLength: 1, maxLength: 5 }),
});
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function describeEvent(e: WatchEvent<unknown>): unknown {
  if (e.kind === "resource") return { kind: e.kind, version: e.version, resource: e.resource };
  if (e.kind === "cleared") return e;
  return { kind: e.kind, message: e.error.message, errorKind: e.error.kind };
}

/** Runs a scenario on a delta client whose transport hands DeltaResponseBytes or decoded responses. */
async function observe(s: Scenario, decodedDelta: boolean): Promise<unknown[]> {
  const { client, server, metrics } = setup({
    protocol: "delta",
    decodedDelta,
    features: { dataErrorHandling: s.dataErrorHandling },
    bootstrap: { dynamic_parameters: { env: "prod" } },
  });
  const { type } = KINDS[s.kind];
  const watchers: RecordingWatcher<unknown>[] = [];
  const watch = (c: XdsClient, n: string, env?: string) => {
    const w = recordingWatcher<unknown>();
    watchers.push(w);
    c.watch(type, n, w, env === undefined ? undefined : { dynamicParameters: { env } });
  };
  for (const n of NAMES) watch(client, n);
  for (const env of ENVS) watch(client, "V", env);
  const stream = await server.nextStream();
  await stream.nextRequest();
  const trace: unknown[] = [];
  for (const [i, r] of s.responses.entries()) {
    const answer = await stream.exchange({
      typeUrl: type.typeUrl,
      versionInfo: `v${i}`,
      nonce: `n${i}`,
      resources: r.entries.map((e) => build(s.kind, e)),
      removed: r.removed,
      resourceErrors: r.errors.map((e) => resourceError(e.name, e.code, `error ${e.code}`)),
    });
    await flush();
    trace.push({
      request: { nonce: answer.nonce, nack: answer.nack, detail: answer.errorDetail },
      events: watchers.map((w) => w.take().map(describeEvent)),
      csds: csdsRows(client),
      configs: client.dumpResources().genericXdsConfigs,
      counters: [...metrics.counters],
    });
  }
  await client.close();
  return trace;
}

describe("delta responses read as DeltaResponseBytes", () => {
  it("change nothing a watcher, the server or CSDS can see, against decoded responses", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        expect(await observe(s, false)).toEqual(await observe(s, true));
      }),
      { numRuns: 80 },
    );
  }, 120_000);

  it("fail the stream before anything is applied when an entry is not a Resource", async () => {
    const { client, server } = setup({ protocol: "delta" });
    const w = recordingWatcher<unknown>();
    client.watch(testListenerType, "A", w);
    const first = await server.nextStream();
    await first.nextRequest();
    const resource = (n: string, p: string) =>
      toBinary(ResourceSchema, create(ResourceSchema, { name: n, version: p, resource: listenerAny(n, p) }));
    const ack = await first.exchange({
      typeUrl: testListenerType.typeUrl,
      versionInfo: "1",
      nonce: "n1",
      resourceBytes: [resource("A", "p1")],
    });
    expect(ack).toMatchObject({ nonce: "n1", nack: false });
    await flush();
    expect(w.take().map((e) => e.kind)).toEqual(["resource"]);
    // A changed, then a field with wire type 7 where a Resource should be.
    first.respond({
      typeUrl: testListenerType.typeUrl,
      versionInfo: "2",
      nonce: "n2",
      resourceBytes: [resource("A", "p2"), new Uint8Array([0x0f])],
    });
    const second = await server.nextStream();
    expect(first.cancelled).toBe(true);
    // The new stream resubscribes with the version held: the response was never applied.
    expect((await second.nextRequest()).initialVersions).toEqual({ A: "p1" });
    await flush();
    expect(w.take()).toEqual([]);
    expect(csdsRows(client).map((r) => `${r.name}:${r.status}:${r.version}`)).toEqual(["A:ACKED:p1"]);
  });
});
