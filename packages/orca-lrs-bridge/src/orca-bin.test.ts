// The hand-written fast path of the binary decoder (and of the base64 trailer) against the reference (protobuf-es
// fromBinary plus the range filter): on valid encodings of random reports, and on those encodings damaged, merged
// or extended, both must give the same report or both must refuse.
import { create, toBinary } from "@bufbuild/protobuf";
import { OrcaLoadReportSchema } from "@xdskit/protos/xds/data/orca/v3/orca_load_report_pb";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  decodeOrcaBinaryTrailer,
  decodeOrcaLoadReport,
  decodeOrcaLoadReportFast,
  decodeOrcaLoadReportSlow,
} from "./orca-bin.js";
import { OrcaParseError } from "./orca-error.js";

const asciiKey = fc.stringMatching(/^[a-z0-9._*-]{0,12}$/);
const anyKey = fc.oneof(asciiKey, fc.string({ maxLength: 6 }), fc.constantFrom("__proto__", "constructor", ""));
const value = fc.oneof(
  fc.double(),
  fc.double({ min: 0, max: 1, noNaN: true }),
  fc.constantFrom(0, -0, 1, Number.NaN, Number.POSITIVE_INFINITY, -1e-300),
);
const map = fc.dictionary(anyKey, value, { maxKeys: 4 });

const reportBytes = fc
  .record(
    {
      cpuUtilization: value,
      memUtilization: value,
      applicationUtilization: value,
      rpsFractional: value,
      eps: value,
      rps: fc.bigInt({ min: 0n, max: 1n << 40n }),
      namedMetrics: map,
      utilization: map,
      requestCost: map,
    },
    { requiredKeys: [] },
  )
  .map((init) => toBinary(OrcaLoadReportSchema, create(OrcaLoadReportSchema, init)));

/** Encodings as a peer may send them: intact (most), merged, truncated, with a byte changed, inserted or appended. */
const damaged = fc.oneof(
  { arbitrary: reportBytes, weight: 4 },
  { arbitrary: fc.tuple(reportBytes, reportBytes).map(([a, b]) => concat(a, b)), weight: 2 },
  {
    arbitrary: fc
      .tuple(reportBytes, fc.nat())
      .map(([bytes, at]) => bytes.slice(0, bytes.length === 0 ? 0 : at % bytes.length)),
    weight: 2,
  },
  {
    arbitrary: fc.tuple(reportBytes, fc.nat(), fc.integer({ min: 0, max: 255 })).map(([bytes, at, byte]) => {
      const copy = bytes.slice();
      if (copy.length > 0) copy[at % copy.length] = byte;
      return copy;
    }),
    weight: 2,
  },
  {
    arbitrary: fc
      .tuple(reportBytes, fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 3 }))
      .map(([bytes, at, extra]) => {
        const i = bytes.length === 0 ? 0 : at % bytes.length;
        return concat(bytes.slice(0, i), extra, bytes.slice(i));
      }),
    weight: 2,
  },
  { arbitrary: fc.uint8Array({ maxLength: 24 }), weight: 1 },
);

type Outcome = { readonly report: unknown } | { readonly error: string };

function outcome(decode: (bytes: Uint8Array) => unknown, bytes: Uint8Array): Outcome {
  try {
    return { report: decode(bytes) };
  } catch (error) {
    if (error instanceof OrcaParseError) return { error: "OrcaParseError" };
    throw error;
  }
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

describe("the fast binary decoder", () => {
  test("gives what the reference decoder gives, or refuses what it refuses", () => {
    fc.assert(
      fc.property(damaged, (bytes) => {
        const reference = outcome(decodeOrcaLoadReportSlow, bytes);
        expect(outcome(decodeOrcaLoadReport, bytes)).toEqual(reference);
        // The trailer path decodes base64 into a reused buffer first: same result, padded or not.
        const text = Buffer.from(bytes).toString("base64");
        expect(outcome(() => decodeOrcaBinaryTrailer(text), bytes)).toEqual(reference);
        expect(outcome(() => decodeOrcaBinaryTrailer(text.replace(/=+$/, "")), bytes)).toEqual(reference);
      }),
      { numRuns: 1500 },
    );
  }, 120_000); // CPU-bound: 13 s in npm test with the machine busy, 32 s at load average 45

  test("decodes a typical report without falling back", () => {
    // Guards the benchmark's premise: a 5-metric report from a gRPC backend takes the fast path.
    const bytes = toBinary(
      OrcaLoadReportSchema,
      create(OrcaLoadReportSchema, {
        cpuUtilization: 0.62,
        memUtilization: 0.41,
        applicationUtilization: 0.55,
        namedMetrics: { queue_depth: 7, cache_hit_ratio: 0.93 },
      }),
    );
    const fast = decodeOrcaLoadReportFast(bytes);
    expect(fast).toBeDefined();
    expect(fast).toEqual(decodeOrcaLoadReportSlow(bytes));
  });
});
