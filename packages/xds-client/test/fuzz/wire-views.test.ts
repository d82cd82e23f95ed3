// The generated wire views (src/gen, tools/protoc-gen-xds-views) against protobuf-es, for every root message of
// views.json: on arbitrary messages over the whole schema (Anys holding the payloads the decoders unpack), on byte
// mutations of their encodings and on concatenations of two (proto merge), a view reader throws exactly when
// `fromBinary` throws, with the same error, and otherwise reads every kept field to the value `fromBinary` gives it.
import { fromBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodedMessageArb } from "./message-arbitrary.js";
import { applyMutations, fromHex, mutationsArb } from "./mutations.js";
import { fuzzParameters, fuzzTimeoutMs } from "./settings.js";
import { project, viewReaderOf, viewsConfig } from "./view-projection.js";

const roots = await Promise.all(viewsConfig.roots.map(viewReaderOf));

type Outcome = "throws" | "reads";

function check(root: (typeof roots)[number], bytes: Uint8Array): Outcome {
  let expected: Record<string, unknown>;
  try {
    expected = fromBinary(root.desc, bytes) as unknown as Record<string, unknown>;
  } catch (error) {
    expect(() => root.reader.read(bytes)).toThrow(error as Error);
    return "throws";
  }
  expect(root.reader.read(bytes)).toEqual(project(root.desc, expected));
  return "reads";
}

describe.each(roots.map((root) => [root.desc.typeName.split(".").pop(), root] as const))("%s view", (_name, root) => {
  const messages = encodedMessageArb(root.desc);

  it(
    "arbitrary messages, mutated or not",
    () => {
      const seen = { throws: 0, reads: 0 };
      fc.assert(
        fc.property(messages, fc.option(mutationsArb, { nil: undefined }), (bytes, mutations) => {
          seen[check(root, mutations === undefined ? bytes : applyMutations(bytes, mutations))]++;
        }),
        fuzzParameters(150),
      );
      expect(seen.reads).toBeGreaterThan(0);
      expect(seen.throws).toBeGreaterThan(0);
    },
    fuzzTimeoutMs,
  );

  it(
    "concatenations of two encodings (singular messages merge, lists append, oneofs take the last)",
    () => {
      fc.assert(
        fc.property(messages, messages, (a, b) => {
          expect(check(root, new Uint8Array([...a, ...b]))).toBe("reads");
        }),
        fuzzParameters(50),
      );
    },
    fuzzTimeoutMs,
  );
});

describe("view readers on hand-made inputs", () => {
  const cla = roots.find((root) => root.desc.typeName.endsWith("ClusterLoadAssignment"))!;
  it("read a field as its declared type whatever its wire type, and let a nested message overrun its length", () => {
    // cluster_name sent as a varint (0: an empty string follows), then an endpoints entry of length 1 whose
    // priority field (2 bytes) crosses its end: protobuf-es accepts both.
    expect(check(cla, fromHex("0800"))).toBe("reads");
    expect(check(cla, fromHex("12012801"))).toBe("reads");
  });
  it("fail as protobuf-es fails: a length past the end, a string that is not UTF-8, a bad tag, too deep", () => {
    expect(check(cla, fromHex("0a06676f6f642d65121d0a0312016112130a100a0e0a0c120831302e302e302e3118501a020805"))).toBe(
      "throws",
    );
    expect(check(cla, fromHex("0a05667a2d65ff"))).toBe("throws");
    expect(check(cla, fromHex("00"))).toBe("throws");
    // A Cluster's metadata holding Structs nested `levels` deep, the innermost holding a Value: the innermost
    // Struct is at depth 3 + 2 * levels (Cluster 1, Metadata 2, then a Struct and a Value per level) and its Value
    // one deeper; protobuf-es's recursion limit is 100.
    const cluster = roots.find((root) => root.desc.typeName === "envoy.config.cluster.v3.Cluster")!;
    const nested = (levels: number) => {
      let struct = wrap(0x0a, wrap(0x12, new Uint8Array([0x08, 0x00]))); // fields{"": null}
      for (let i = 0; i < levels; i++) struct = wrap(0x0a, wrap(0x12, wrap(0x2a, struct))); // fields{"": {struct}}
      return wrap(0xca, wrap(0x0a, wrap(0x12, struct)), 0x01); // metadata.filter_metadata{"": struct}
    };
    expect(check(cluster, nested(48))).toBe("reads");
    expect(check(cluster, nested(49))).toBe("throws");
  });
});

/** `payload` as a length-delimited field whose tag bytes are `tag` (and `tag2` for a two-byte tag). */
function wrap(tag: number, payload: Uint8Array, tag2?: number): Uint8Array {
  const length: number[] = [];
  for (let n = payload.length; ; n >>>= 7) {
    if (n < 0x80) {
      length.push(n);
      break;
    }
    length.push((n & 0x7f) | 0x80);
  }
  return new Uint8Array([tag, ...(tag2 === undefined ? [] : [tag2]), ...length, ...payload]);
}
