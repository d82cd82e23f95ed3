// The byte-identical skip (DecodeMemo, docs/architecture.md#the-byte-identical-skip): a SotW resource whose bytes were
// in the previous response is not decoded again. Proven against the client without it: for random sequences of
// responses (identical, changed, reordered, malformed, wrapped, TP2 variants, removed, TP3 errors), both clients
// tell their watchers the same things, send the same ACKs and NACKs, and report the same CSDS and metrics. The same
// proof for the apply-side skip (cache-updates.ts `reapplyIdentical`: an entry holding the resource ACKed and clean
// only has its version moved) against applying every resource.
import { create, toBinary } from "@bufbuild/protobuf";
import { type Any, AnySchema, anyPack } from "@bufbuild/protobuf/wkt";
import {
  type DynamicParameterConstraints,
  ResourceSchema,
} from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ResourceType, XdsClient } from "../src/index.js";
import { readAny } from "../src/wire/any-reader.js";
import { DecodeMemo, entriesOfViews } from "../src/wire/decode-memo.js";
import { outcomeOf } from "../src/wire/entry-outcome.js";
import { unwrapAny } from "../src/wire/resource-unwrap.js";
import { context } from "./fuzz/decode-context.js";
import { resourceError } from "./support/fake-transport.js";
import { csdsRows, setup } from "./support/harness.js";
import { flush, type RecordingWatcher, recordingWatcher, type WatchEvent } from "./support/recorder.js";
import { endpointsAny, listenerAny, testEndpointsType, testListenerType, wrappedAny } from "./support/test-types.js";

const NAMES = ["A", "B", "C", "bad"] as const;
const ENVS = ["prod", "test"] as const;

function envIs(env: string): DynamicParameterConstraints {
  return create(ResourceSchema, {
    resourceName: {
      dynamicParameterConstraints: {
        type: { case: "constraint", value: { key: "env", constraintType: { case: "value", value: env } } },
      },
    },
  }).resourceName!.dynamicParameterConstraints!;
}

/** The two test types: LDS-like (an omitted resource is deleted) and EDS-like (it is not). */
const KINDS = {
  lds: { type: testListenerType as ResourceType<unknown>, any: (n: string, v: number) => listenerAny(n, `p${v}`) },
  eds: { type: testEndpointsType as ResourceType<unknown>, any: (n: string, v: number) => endpointsAny(n, v + 1) },
};
type Kind = keyof typeof KINDS;

/** One entry of a SotW response, built fresh (new bytes) each time; `v` picks between two contents. */
type Entry =
  | { readonly t: "plain"; readonly name: string; readonly v: number }
  | { readonly t: "wrapped"; readonly outer: string; readonly name: string; readonly v: number }
  | { readonly t: "variant"; readonly env: string; readonly v: number }
  | { readonly t: "garbage"; readonly bytes: readonly number[] }
  | { readonly t: "wrongType"; readonly name: string };

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
          resourceName: { name: "V", dynamicParameterConstraints: envIs(entry.env) },
          resource: any("V", entry.v),
        }),
      );
    case "garbage":
      return create(AnySchema, { typeUrl: type.typeUrl, value: new Uint8Array(entry.bytes) });
    case "wrongType":
      return kind === "lds" ? endpointsAny(entry.name) : listenerAny(entry.name);
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
    // A truncated field, or a valid empty message: the same garbage may come twice.
    arbitrary: fc.record({
      t: fc.constant("garbage" as const),
      bytes: fc.constantFrom([0x0a, 0x05, 0x41], [0xff], []),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("wrongType" as const), name }) },
);
/**
 * Before a response, a watch may come or go: a name's only watch cancelled (its entry removed), or a new one (a new
 * entry, or a second watcher), so what the last response's resources reached is stale for the next.
 */
const churn = fc.option(
  fc.oneof(
    fc.record({ op: fc.constant("cancel" as const), watch: fc.nat({ max: NAMES.length + ENVS.length - 1 }) }),
    fc.record({ op: fc.constant("watch" as const), name: fc.constantFrom(...NAMES, "D") }),
  ),
  { freq: 3 },
);
const response = fc.record({
  churn,
  entries: fc.array(entry, { maxLength: 8 }),
  errors: fc.array(fc.record({ name: fc.constantFrom(...NAMES, "V"), code: fc.constantFrom(5, 7, 14) }), {
    maxLength: 1,
  }),
});
const scenario = fc.record({
  kind: fc.constantFrom<Kind>("lds", "eds"),
  serverFeatures: fc.subarray(["ignore_resource_deletion", "fail_on_data_errors"]),
  dataErrorHandling: fc.boolean(),
  responses: fc.array(response, { minLength: 1, maxLength: 6 }),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function describeEvent(e: WatchEvent<unknown>): unknown {
  if (e.kind === "resource") return { kind: e.kind, version: e.version, resource: e.resource };
  if (e.kind === "cleared") return e;
  return { kind: e.kind, message: e.error.message, errorKind: e.error.kind };
}

/**
 * Runs a scenario on a client with the skip on or off (and reapplyIdentical, unless `reapply` is false), its transport
 * handing SotwResponseBytes (as the default one does) or decoded DiscoveryResponses; returns everything observable,
 * step by step.
 */
async function observe(s: Scenario, decodeMemo: boolean, decodedSotw = false, reapply = true): Promise<unknown[]> {
  const { client, server, metrics } = setup({
    decodeMemo,
    decodedSotw,
    reapplyIdentical: reapply,
    serverFeatures: s.serverFeatures,
    features: { dataErrorHandling: s.dataErrorHandling },
    bootstrap: { dynamic_parameters: { env: "prod" } },
  });
  const { type } = KINDS[s.kind];
  const watchers: RecordingWatcher<unknown>[] = [];
  const cancels: (() => void)[] = [];
  const watch = (c: XdsClient, n: string, env?: string) => {
    const w = recordingWatcher<unknown>();
    watchers.push(w);
    cancels.push(c.watch(type, n, w, env === undefined ? undefined : { dynamicParameters: { env } }));
  };
  for (const n of NAMES) watch(client, n);
  for (const env of ENVS) watch(client, "V", env);
  const stream = await server.nextStream();
  await stream.nextRequest();
  const trace: unknown[] = [];
  for (const [i, r] of s.responses.entries()) {
    const sent = stream.requests.length;
    if (r.churn?.op === "cancel") cancels[r.churn.watch]!();
    else if (r.churn?.op === "watch") watch(client, r.churn.name);
    await flush();
    // The requests the change caused (a second watcher of a name causes none).
    const asked: unknown[] = [];
    while (stream.requests.length > sent + asked.length) asked.push((await stream.nextRequest()).names);
    const answer = await answered(
      stream.exchange({
        typeUrl: type.typeUrl,
        versionInfo: `v${i}`,
        nonce: `n${i}`,
        resources: r.entries.map((e) => build(s.kind, e)),
        resourceErrors: r.errors.map((e) => resourceError(e.name, e.code, `error ${e.code}`)),
      }),
    );
    await flush();
    trace.push({
      asked,
      request: { version: answer.version, nonce: answer.nonce, nack: answer.nack, detail: answer.errorDetail },
      events: watchers.map((w) => w.take().map(describeEvent)),
      csds: csdsRows(client),
      configs: client.dumpResources().genericXdsConfigs,
      counters: [...metrics.counters],
    });
  }
  await client.close();
  return trace;
}

/** The client's answer to a response, or a failure saying it sent none (rather than a test that hangs). */
function answered<T>(request: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("the client sent no ACK or NACK within 5 s")), 5000);
  });
  return Promise.race([request, late]).finally(() => clearTimeout(timer));
}

/** A type that counts its decodes. */
function countingDecodes<T>(type: ResourceType<T>) {
  const decodes = { n: 0 };
  const counting: ResourceType<unknown> = {
    ...type,
    decode: (any, c) => {
      decodes.n += 1;
      return type.decode(any, c);
    },
  };
  return { counting, decodes };
}

describe("the byte-identical skip", () => {
  it("changes nothing a watcher, the server or CSDS can see", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        expect(await observe(s, true)).toEqual(await observe(s, false));
      }),
      { numRuns: 150 },
    );
    // About 13 s on a loaded 2-core machine (2 s idle): an explicit budget far above it.
  }, 120_000);

  it("sees the same from a transport that hands decoded Anys as from one that hands their bytes", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        expect(await observe(s, true, true)).toEqual(await observe(s, false));
      }),
      { numRuns: 60 },
    );
  }, 60_000);

  it("applied with reapplyIdentical, changes nothing a watcher, the server or CSDS can see either", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        expect(await observe(s, true, false, true)).toEqual(await observe(s, true, false, false));
      }),
      { numRuns: 80 },
    );
  }, 120_000);

  it("decodes only the resources whose bytes were not in the previous response, in any order", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.nat(),
        fc.integer({ min: 0, max: 5 }),
        (ids, changed, seed, scannedMisses) => {
          const { counting, decodes } = countingDecodes(testEndpointsType);
          const { features } = context;
          const settings = { features, context };
          const typeUrl = testEndpointsType.typeUrl;
          const slow = (bytes: Uint8Array) =>
            outcomeOf(testEndpointsType, unwrapAny(readAny(bytes), typeUrl, features), settings);
          const memo = new DecodeMemo(scannedMisses);
          /** One response of `list` (each entry in memory of its own, as from a transport handing decoded Anys). */
          const readAll = (list: Uint8Array[]) => {
            memo.expect(entriesOfViews(list));
            const outcomes = list.map((bytes, i) => {
              const outcome =
                memo.find(i) ?? outcomeOf(counting, unwrapAny(readAny(bytes), typeUrl, features), settings);
              memo.keep(i, outcome);
              return outcome;
            });
            memo.rotate();
            return outcomes;
          };
          readAll(ids.map((id) => toBinary(AnySchema, endpointsAny(`r${id}`, 1))));
          expect(decodes.n).toBe(ids.length);
          // The same resources (new bytes, same content) in another order, one of them changed.
          const which = changed % ids.length;
          const order = ids.map((id, i) => ({ id, i, key: (i * 7919 + seed) % 104_729 })).sort((a, b) => a.key - b.key);
          decodes.n = 0;
          const second = order.map(({ id, i }) => toBinary(AnySchema, endpointsAny(`r${id}`, i === which ? 2 : 1)));
          readAll(second).forEach((outcome, position) => {
            expect(outcome).toEqual(slow(second[position]!));
          });
          expect(decodes.n).toBe(1);
        },
      ),
    );
  });
});

describe("a SotW response holding bytes that are not an Any", () => {
  it("fails the stream before anything is applied, and the skip still knows the last response read", async () => {
    const { counting, decodes } = countingDecodes(testListenerType);
    const { client, server } = setup();
    const w = recordingWatcher<unknown>();
    client.watch(counting, "A", w);
    client.watch(counting, "B", recordingWatcher<unknown>());
    const first = await server.nextStream();
    await first.nextRequest();
    const a = toBinary(AnySchema, listenerAny("A", "p1"));
    const b = toBinary(AnySchema, listenerAny("B", "p1"));
    const ack = await first.exchange({
      typeUrl: counting.typeUrl,
      versionInfo: "1",
      nonce: "n1",
      resourceBytes: [a, b],
    });
    expect(ack).toMatchObject({ version: "1", nonce: "n1", nack: false });
    await flush();
    expect(w.take().map((e) => e.kind)).toEqual(["resource"]);
    expect(decodes.n).toBe(2);
    // A changed, then a field with wire type 7 where an Any should be.
    first.respond({
      typeUrl: counting.typeUrl,
      versionInfo: "2",
      nonce: "n2",
      resourceBytes: [toBinary(AnySchema, listenerAny("A", "p2")), new Uint8Array([0x0f])],
    });
    const second = await server.nextStream();
    expect(first.cancelled).toBe(true);
    // The new stream asks again with the last accepted version and no nonce: the response was never taken.
    expect(await second.nextRequest()).toMatchObject({ version: "1", nonce: "", nack: false });
    await flush();
    expect(w.take()).toEqual([]);
    expect(csdsRows(client).map((r) => `${r.name}:${r.status}:${r.version}`)).toEqual(["A:ACKED:1", "B:ACKED:1"]);
    // The same two resources again: nothing to decode.
    decodes.n = 0;
    await second.exchange({ typeUrl: counting.typeUrl, versionInfo: "3", nonce: "n3", resourceBytes: [a, b] });
    expect(decodes.n).toBe(0);
  });
});
