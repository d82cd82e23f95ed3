// A delta response read as ranges has its resources read in two passes (src/wire/delta-entries.ts): for a type that
// never reads its wrapper, a plain entry is decoded without its `Resource` message. Property, for any list of entries
// (Resources as servers might send them, plain or not, then the same with byte-level mutations) and three types (CDS;
// a probe type that does not read its wrapper, whose outcome is picked by the bytes it is given: named as the wrapper
// or otherwise, failing with or without a name, throwing; one that reads its wrapper):
//   - the two passes fail where reading every entry to its `Resource` (`readResource`) fails, with the same message;
//   - otherwise they give the response the general way gives (each entry read to its `Resource`, unwrapped,
//     `outcomeOf`): the same resources (name, outcome, value, bytes, version, variant), NACK lines and counts, and a
//     type that reads its wrapper is given the same wrappers.
import { create, toBinary } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { type Resource, ResourceSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { DeltaResponseBytesSchema } from "@xdskit/protos/xdskit/client/v1/delta_response_pb";
import fc from "fast-check";
import { expect, it } from "vitest";
import type { ResourceType } from "../../src/index.js";
import { readPlainDeltaResponse } from "../../src/transport/response-reader.js";
import { expectTypeUrls, UnreadableResponseError } from "../../src/wire/any-reader.js";
import { type DecodedResponse, type DecodeSettings, emptyResponse } from "../../src/wire/decoded-response.js";
import { addDeltaEntries, readDeltaEntries } from "../../src/wire/delta-entries.js";
import { readPlainResource, readResource } from "../../src/wire/delta-resource.js";
import { addOutcome, outcomeOf } from "../../src/wire/entry-outcome.js";
import { unwrapResource } from "../../src/wire/resource-unwrap.js";
import { context } from "./decode-context.js";
import { resourceEntryArb } from "./delta-resource-arbitrary.js";
import { applyMutations, mutationsArb } from "./mutations.js";
import { RESOURCE_KINDS } from "./resource-arbitraries.js";
import { fuzzParameters, fuzzTimeoutMs } from "./settings.js";

const kind = RESOURCE_KINDS.find((k) => k.label === "CDS")!;
const typeUrl = kind.type.typeUrl;
const settings: DecodeSettings = { features: context.features, context };

/** Wrappers a type that reads them was given, in order. */
const wrappersSeen: (Resource | undefined)[] = [];

const probeType: ResourceType<string> = {
  typeUrl,
  typeName: "Probe",
  allResourcesRequiredInSotW: true,
  usesWrapper: false,
  decode(any: Any) {
    const text = Buffer.from(any.value).toString("latin1");
    switch (any.value.length % 5) {
      case 0:
        return { ok: true, name: "a", value: text };
      case 1:
        return { ok: true, name: text, value: "own name" };
      case 2:
        return { ok: false, name: "cluster-1", error: "bad" };
      case 3:
        return { ok: false, error: "bad, nameless" };
      default:
        throw new Error("probe throws");
    }
  },
};

const wrapperType: ResourceType<number> = {
  typeUrl,
  typeName: "WrapperReader",
  allResourcesRequiredInSotW: true,
  decode(any: Any, given) {
    wrappersSeen.push(given.wrapper);
    return { ok: true, name: "w", value: any.value.length };
  },
};

const TYPES: readonly ResourceType<unknown>[] = [kind.type, probeType, wrapperType];

/** A plain entry, as most are: versions of one length that differ, names the decoder's or not. */
const plainEntryArb = fc
  .record({
    name: fc.constantFrom("", "a", "b", "cluster-1"),
    version: fc.constantFrom("", "1", "2", "v3"),
    value: kind.bytes("a"),
  })
  .map(({ name, version, value }) =>
    toBinary(ResourceSchema, create(ResourceSchema, { name, version, resource: { typeUrl, value } })),
  );

const entryArb = fc.oneof(
  { weight: 3, arbitrary: plainEntryArb },
  { weight: 3, arbitrary: resourceEntryArb(kind) },
  { weight: 1, arbitrary: fc.tuple(resourceEntryArb(kind), mutationsArb).map(([b, m]) => applyMutations(b, m)) },
);

/** What a response holds, comparably. */
function summary(out: DecodedResponse) {
  return {
    resources: out.resources.map((r) => ({
      name: r.name,
      ok: r.ok,
      value: r.value,
      detail: r.detail,
      bytes: r.bytes,
      version: r.version,
      constraints: r.constraints,
      variant: r.variant,
    })),
    errors: out.errors,
    valid: out.valid,
    invalid: out.invalid,
  };
}

type Outcome =
  | { readonly failed: string }
  | { readonly response: ReturnType<typeof summary>; readonly wrappers: unknown[] };

/** The general way: every entry read to its Resource first, then unwrapped and decoded. */
function generalWay(entries: readonly Uint8Array[], type: ResourceType<unknown>): Outcome {
  const expected = expectTypeUrls(typeUrl);
  let resources: Resource[];
  try {
    resources = entries.map((bytes) => readResource(bytes, expected));
  } catch (error) {
    expect(error).toBeInstanceOf(UnreadableResponseError);
    return { failed: (error as Error).message };
  }
  wrappersSeen.length = 0;
  const out = emptyResponse(typeUrl, type, "", "", false);
  resources.forEach((resource, i) => {
    addOutcome(
      out,
      i,
      outcomeOf(type, unwrapResource(resource, typeUrl, settings.features), settings, resource.version),
    );
  });
  return { response: summary(out), wrappers: [...wrappersSeen] };
}

/** The two passes, over the response's ranges as the transport reads them. */
function twoPasses(entries: readonly Uint8Array[], type: ResourceType<unknown>): Outcome {
  const bytes = toBinary(
    DeltaResponseBytesSchema,
    create(DeltaResponseBytesSchema, { typeUrl, resources: [...entries] }),
  );
  const response = readPlainDeltaResponse(bytes);
  expect(response).toBeDefined();
  let read: ReturnType<typeof readDeltaEntries>;
  try {
    read = readDeltaEntries(response!.entries, expectTypeUrls(typeUrl));
  } catch (error) {
    expect(error).toBeInstanceOf(UnreadableResponseError);
    return { failed: (error as Error).message };
  }
  wrappersSeen.length = 0;
  const out = emptyResponse(typeUrl, type, "", "", false);
  addDeltaEntries(out, read, settings);
  return { response: summary(out), wrappers: [...wrappersSeen] };
}

it(
  "a delta response's resources read in two passes give what reading each to its Resource gives",
  () => {
    const seen = { plain: 0, other: 0, failed: 0, named: 0 };
    fc.assert(
      fc.property(fc.array(entryArb, { maxLength: 6 }), fc.constantFrom(...TYPES), (entries, type) => {
        const general = generalWay(entries, type);
        const passes = twoPasses(entries, type);
        expect(passes).toStrictEqual(general);
        if ("failed" in general) seen.failed += 1;
        else seen.named += general.response.resources.length;
        const expected = expectTypeUrls(typeUrl);
        for (const bytes of entries) {
          if (readPlainResource(bytes, expected) !== undefined) seen.plain += 1;
          else seen.other += 1;
        }
      }),
      fuzzParameters(1500),
    );
    // Each kind of case was met: plain entries, others, responses that fail, named resources.
    expect(Math.min(seen.plain, seen.other, seen.failed, seen.named)).toBeGreaterThan(20);
  },
  fuzzTimeoutMs,
);
