// DecodeMemo over responses as the default transport hands them (every entry a view into one response buffer): for
// any sequence of responses, each the one before with entries changed (keeping or changing their length), added,
// removed or reordered, `find` never gives an entry the outcome of other bytes. It gives the outcome of an equal entry
// of the previous response exactly when there was one, except in a response laid out like the previous one: there
// it compares runs of entries at once (`expect`), and gives an entry the outcome of the entry at its own position
// only. The others go entry by entry, by position, scan and hash, until their searches prove hopeless.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { DiscoveryResponseSchema } from "@xdskit/protos/envoy/service/discovery/v3/discovery_pb";
import { SotwResponseBytesSchema } from "@xdskit/protos/xdskit/client/v1/sotw_response_pb";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { DecodeMemo, entriesOfViews } from "../src/wire/decode-memo.js";
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
    const seen = { reused: 0, missed: 0, alike: 0 };
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
          let previousViews: Uint8Array[] = [];
          const steps: [Edit | undefined, boolean][] = [[undefined, false], ...edits];
          for (const [edit, second] of steps) {
            if (edit !== undefined) entries = applyEdit(entries, edit);
            if (edit?.op === "version") version = edit.version;
            // A second edit of the same kind before reading makes several changes per response.
            if (edit !== undefined && second) entries = applyEdit(entries, edit);
            const views = read(entries, version);
            memo.expect(entriesOfViews(views));
            const alike = memo.laidOutAlike;
            views.forEach((bytes, i) => {
              const found = memo.find(i);
              const atPosition = previousViews[i] !== undefined && hex(previousViews[i]!) === hex(bytes);
              if (atPosition || (!alike && previous.has(hex(bytes)))) {
                expect(found?.error).toBe(hex(bytes));
                seen.reused += 1;
              } else {
                expect(found).toBeUndefined();
                seen.missed += 1;
              }
              memo.keep(i, found ?? outcomeFor(bytes));
            });
            memo.rotate();
            previous = new Set(views.map(hex));
            previousViews = views;
            if (alike) seen.alike += 1;
          }
        },
      ),
      { numRuns: 300 },
    );
    expect(seen.reused).toBeGreaterThan(0);
    expect(seen.missed).toBeGreaterThan(0);
    expect(seen.alike).toBeGreaterThan(0);
  });

  it("stops searching a response whose entries all changed, and still finds every entry of a reordered one", () => {
    const response = (tag: number) =>
      Array.from({ length: 1000 }, (_, i) => ({ typeUrl: "a/T", value: new Uint8Array([i & 0xff, i >> 8, tag]) }));
    const memo = new DecodeMemo();
    const compare = vi.spyOn(Buffer.prototype, "compare");
    // The hash index is a Map: its lookups are the searches made.
    const lookups = vi.spyOn(Map.prototype, "get");
    const round = (entries: Entry[], version: string) => {
      const views = read(entries, version);
      compare.mockClear();
      lookups.mockClear();
      memo.expect(entriesOfViews(views));
      let found = 0;
      views.forEach((bytes, i) => {
        const outcome = memo.find(i);
        if (outcome !== undefined) {
          expect(outcome.error).toBe(hex(bytes));
          found += 1;
        }
        memo.keep(i, outcome ?? outcomeFor(bytes));
      });
      const searches = lookups.mock.calls.length;
      memo.rotate();
      return { found, compares: compare.mock.calls.length, searches };
    };
    try {
      round(response(0), "1");
      // Every entry new, and laid out otherwise (one entry longer): 4 scans of 1,000 entries, then the index of the
      // previous response (a lookup per entry to build it) and a lookup per entry searched, which stop after 64
      // (each entry is still compared at its own position).
      const changed = response(1);
      changed[0] = { typeUrl: "a/T", value: new Uint8Array([1, 2, 3, 4]) };
      const all = round(changed, "2");
      expect(all.found).toBe(0);
      expect(all.compares).toBeLessThanOrEqual(1000 + 4 * 1000);
      expect(all.searches).toBeLessThanOrEqual(1000 + 64);
      // The same entries reversed: found by hash, every one.
      const reversed = round([...changed].reverse(), "3");
      expect(reversed.found).toBe(1000);
    } finally {
      compare.mockRestore();
      lookups.mockRestore();
    }
  });
});

describe("DecodeMemo's shortcut for a response laid out like the one before", () => {
  it("compares runs of entries, not each entry: a re-push with one of 1,000 changed makes a few dozen compares", () => {
    const entries: Entry[] = Array.from({ length: 1000 }, (_, i) => ({
      typeUrl: "a/T",
      value: new Uint8Array([i & 0xff, i >> 8, 7]),
    }));
    // A changed entry is not looked for elsewhere (no scan, no hash): the layout says it changed.
    const memo = new DecodeMemo();
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
        memo.expect(entriesOfViews(views));
        let found = 0;
        views.forEach((bytes, i) => {
          const outcome = memo.find(i);
          if (outcome !== undefined) found += 1;
          memo.keep(i, outcome ?? outcomeFor(bytes));
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
