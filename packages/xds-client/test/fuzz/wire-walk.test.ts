// The schema-driven reader the EDS fast path relies on for the fields it does not keep, against protobuf-es on
// whole LDS, RDS and CDS messages (maps, oneofs, repeated and packed scalars, wrappers, Any, Struct, enums...):
// on valid and mutated encodings, it throws exactly when `fromBinary` throws.
import { fromBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { walkBytes } from "../../src/resources/wire-walk.js";
import { applyMutations, mutationsArb } from "./mutations.js";
import { RESOURCE_KINDS } from "./resource-arbitraries.js";
import { fuzzParameters, fuzzTimeoutMs } from "./settings.js";

function outcome(run: () => unknown): string {
  try {
    run();
    return "ok";
  } catch {
    return "throws";
  }
}

describe.each(RESOURCE_KINDS.map((kind) => [kind.label, kind] as const))("%s messages", (_label, kind) => {
  it(
    "walkBytes throws exactly when fromBinary throws",
    () => {
      const seen = { ok: 0, throws: 0 };
      fc.assert(
        fc.property(kind.bytes("a"), mutationsArb, fc.boolean(), (bytes, mutations, mutate) => {
          const input = mutate ? applyMutations(bytes, mutations) : bytes;
          const expected = outcome(() => fromBinary(kind.schema, input));
          expect(outcome(() => walkBytes(kind.schema, input))).toBe(expected);
          seen[expected as keyof typeof seen]++;
        }),
        fuzzParameters(200),
      );
      expect(seen.ok).toBeGreaterThan(0);
      expect(seen.throws).toBeGreaterThan(0);
    },
    fuzzTimeoutMs,
  );
});
