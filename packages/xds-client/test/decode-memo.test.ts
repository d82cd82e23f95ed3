// DecodeMemo over responses as the default transport hands them (every entry a view into one response buffer): for
// any sequence of responses, each the one before with entries changed (keeping or changing their length), added,
// removed or reordered, `find` gives an entry the outcome of an equal entry of the previous response exactly when
// there was one. Responses laid out like the previous one take the shortcut that compares runs of entries at once
// (`expect`); the others go entry by entry, by position, scan and hash.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { DiscoveryResponseSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { SotwResponseBytesSchema } from "@xdskit/protos/xdskit/client/v1/sotw_response_pb";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { DecodeMemo } from "../src/wire/decode-memo.js";
import type { EntryOutcome } from "../src/wire/entry-outcome.js";

/** An entry's bytes (an Any's: a type URL and a value). */
const entryArb: fc.Arbitrary<Entry> = fc
  .record({ value: fc.uint8Array({ minLength: 0, maxLength: 6 }), url: fc.constantFrom("a/T", "a/U") })
  .map(({ value, url }) => ({ typeUrl: url, value }));

type Entry = { readonly typeUrl: string; readonly value: Uint8Array };

/** How the next response differs from the one before. */
const editArb = fc.oneof(
  fc.record({ op: fc.constant("same-length" as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ op: fc.constant("replace" as const), at: fc.nat(), entry: entryArb }),
  fc.record({ op: fc.constant("insert" as const), at: fc.nat(), entry: entryArb }),
  fc.record({ op: fc.constant("remove" as const), at: fc.nat() }),
  fc.record({ op: fc.constant("reverse" as const) }),
  fc.record({ op: fc.constant("version" as const), version: fc.constantFrom("1", "22", "333") }),
);

type Edit = typeof editArb extends fc.Arbitrary<infer E> ? E : never;

function applyEdit(entries: Entry[], edit: Edit): Entry[] {
  const out = [...entries];
  const at = "at" in edit && out.length > 0 ? edit.at % out.length : 0;
  switch (edit.op) {
    case "same-length": {
      const e = out[at];
      if (e === undefined || e.value.length === 0) break;
      const value = e.value.slice();
      value[0] = edit.byte;
      out[at] = { typeUrl: e.typeUrl, value };
      break;
    }
    case "replace":
      if (out.length > 0) out[at] = edit.entry;
      break;
    case "insert":
      out.splice(at, 0, edit.entry);
      break;
    case "remove":
      out.splice(at, 1);
      break;
    case "reverse":
      out.reverse();
      break;
    case "version":
      break;
  }
  return out;
}

/** A response's entries as the transport reads them: views into the one buffer of the encoded response. */
function read(entries: readonly Entry[], version: string): Uint8Array[] {
  const bytes = toBinary(
    DiscoveryResponseSchema,
    create(DiscoveryResponseSchema, {
      versionInfo: version,
      typeUrl: "a/T",
      resources: entries.map((e) => ({ typeUrl: e.typeUrl, value: e.value })),
    }),
  );
  return fromBinary(SotwResponseBytesSchema, bytes).resources;
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

/** A stand-in outcome naming the bytes it was made for. */
const outcomeFor = (bytes: Uint8Array): EntryOutcome => ({ resource: undefined, ok: true, error: hex(bytes) });

describe("DecodeMemo over shared response buffers", () => {
  it("finds an entry's outcome exactly when the previous response had the same bytes", () => {
    const seen = { reused: 0, missed: 0 };
    fc.assert(
      fc.property(
        fc.array(entryArb, { minLength: 1, maxLength: 12 }),
        fc.array(fc.tuple(editArb, fc.boolean()), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 5 }),
        (initial, edits, scannedMisses) => {
          const memo = new DecodeMemo(scannedMisses);
          let entries = initial;
          let version = "0";
          let previous = new Set<string>();
          const steps: [Edit | undefined, boolean][] = [[undefined, false], ...edits];
          for (const [edit, second] of steps) {
            if (edit !== undefined) entries = applyEdit(entries, edit);
            if (edit?.op === "version") version = edit.version;
            // A second edit of the same kind before reading makes several changes per response.
            if (edit !== undefined && second) entries = applyEdit(entries, edit);
            const views = read(entries, version);
            memo.expect(views);
            views.forEach((bytes, i) => {
              const found = memo.find(i, bytes);
              if (previous.has(hex(bytes))) {
                expect(found?.error).toBe(hex(bytes));
                seen.reused += 1;
              } else {
                expect(found).toBeUndefined();
                seen.missed += 1;
              }
              memo.keep(i, bytes, found ?? outcomeFor(bytes));
            });
            memo.rotate();
            previous = new Set(views.map(hex));
          }
        },
      ),
      { numRuns: 300 },
    );
    expect(seen.reused).toBeGreaterThan(0);
    expect(seen.missed).toBeGreaterThan(0);
  });
});

describe("DecodeMemo's shortcut for a response laid out like the one before", () => {
  it("compares runs of entries, not each entry: a re-push with one of 1,000 changed makes a few dozen compares", () => {
    const entries: Entry[] = Array.from({ length: 1000 }, (_, i) => ({
      typeUrl: "a/T",
      value: new Uint8Array([i & 0xff, i >> 8, 7]),
    }));
    // Changed entries are looked for among all of the previous response's by hash, not by a scan (no compares).
    const memo = new DecodeMemo(0);
    const compare = vi.spyOn(Buffer.prototype, "compare");
    try {
      // The second response moves every entry (a longer version) and changes one; the third changes another.
      for (const [round, version] of [
        [0, "1"],
        [1, "22"],
        [2, "33"],
      ] as const) {
        const changed = entries.map((e, i) =>
          i === 100 * round ? { typeUrl: e.typeUrl, value: new Uint8Array([9, 9, round]) } : e,
        );
        const views = read(changed, version);
        compare.mockClear();
        memo.expect(views);
        let found = 0;
        views.forEach((bytes, i) => {
          const outcome = memo.find(i, bytes);
          if (outcome !== undefined) found += 1;
          memo.keep(i, bytes, outcome ?? outcomeFor(bytes));
        });
        memo.rotate();
        if (round > 0) {
          expect(found).toBeGreaterThanOrEqual(998);
          expect(compare.mock.calls.length).toBeLessThan(60);
        }
      }
    } finally {
      compare.mockRestore();
    }
  });
});
