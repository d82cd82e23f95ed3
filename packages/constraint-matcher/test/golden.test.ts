// The golden table: every example of the first TP2 draft (draft dialect) and of TP2's current text (merged API), each
// row carrying the sentence it checks. Rows live in golden-merged.ts and golden-draft.ts.
import { describe, expect, it } from "vitest";
import {
  checkBestPractices,
  compile,
  createVariantIndex,
  deriveParameters,
  findOverlaps,
  fromDraft,
  fromProto,
  fromText,
  matches,
  selectAllDraftVariants,
  selectDraftVariant,
  toProto,
} from "../src/index.js";
import {
  DRAFT_MATCH_ROWS,
  DRAFT_SELECT_ROWS,
  ENVS,
  exact,
  INVERT_TABLE,
  ROUTE_CONTENTS,
  VERSIONS,
} from "./golden-draft.js";
import { CHECK_ROWS, DERIVE_ROWS, MATCH_ROWS, SELECT_ROWS } from "./golden-merged.js";

const asMap = (p: Readonly<Record<string, string>>) => new Map(Object.entries(p));

describe("golden: merged API matching", () => {
  it.each(MATCH_ROWS)("$spec | $constraints on $params → $expected", (row) => {
    const e = fromText(row.constraints);
    expect(matches(e, row.params)).toBe(row.expected);
    expect(matches(e, asMap(row.params))).toBe(row.expected);
    expect(compile(e)(row.params)).toBe(row.expected);
    expect(matches(fromProto(toProto(e)), row.params)).toBe(row.expected);
  });
});

describe("golden: merged API variant selection", () => {
  it.each(SELECT_ROWS)("$spec | $variants with $params → $expected", (row) => {
    const index = createVariantIndex<string>();
    for (const text of row.variants) index.add(fromText(text), text);
    expect(index.selectAll(row.params).map((v) => v.value)).toEqual(row.expected);
    const s = index.select(asMap(row.params));
    if (row.expected.length === 0) {
      expect(s).toBeUndefined();
    } else {
      expect(s?.variant.value).toBe(row.expected[0]);
      expect(s?.ambiguous.map((v) => v.value)).toEqual(row.expected.slice(1));
    }
  });

  it("§2.1: Constraints count as part of the resource's unique identity", () => {
    const index = createVariantIndex<string>();
    index.add(fromText("env=prod && version=v1"), "first");
    index.add(fromText("version=v1 && env=prod"), "second");
    index.add(fromText("env=prod"), "other");
    expect(index.size).toBe(2);
    expect(index.select({ env: "prod", version: "v1" })?.variant.value).toBe("second");
  });

  it("§2.8: Caching proxies ... choose a variant ... by evaluating the subscriber's parameters against each stored variant's constraints", () => {
    const cache = createVariantIndex<string>();
    cache.add(fromText("env=prod"), "prod contents");
    cache.add(fromText("env=test"), "test contents");
    const subscribers = [{ env: "prod", zone: "a" }, { env: "test" }, { env: "qa" }];
    expect(subscribers.map((p) => cache.select(p)?.variant.value)).toEqual([
      "prod contents",
      "test contents",
      undefined,
    ]);
  });

  it("§2.10: one `env=prod` variant splits into `env=prod,version=v1|v2`", () => {
    const index = createVariantIndex<string>();
    index.add(fromText("env=prod"), "prod");
    expect(index.select({ env: "prod", version: "v2" })?.variant.value).toBe("prod");
    index.remove(fromText("env=prod"));
    index.add(fromText("env=prod && version=v1"), "prod-v1");
    index.add(fromText("env=prod && version=v2"), "prod-v2");
    expect(index.select({ env: "prod", version: "v2" })).toMatchObject({
      variant: { value: "prod-v2" },
      ambiguous: [],
    });
    expect(index.select({ env: "prod" })).toBeUndefined();
  });

  it("seed Background: only four variants ({env!=prod, version!=v1}, ...) serve the nine clients", () => {
    const index = createVariantIndex<string>();
    for (const prod of [false, true]) {
      for (const v1 of [false, true]) {
        const text = `${prod ? "" : "!"}env=prod && ${v1 ? "" : "!"}version=v1`;
        index.add(fromText(text), ROUTE_CONTENTS(prod ? "prod" : "x", v1 ? "v1" : "x"));
      }
    }
    for (const env of ENVS) {
      for (const version of VERSIONS) {
        const s = index.select({ env, version });
        expect(s?.variant.value).toBe(ROUTE_CONTENTS(env, version));
        expect(s?.ambiguous).toEqual([]);
      }
    }
  });
});

describe("golden: server-side checks", () => {
  it.each(CHECK_ROWS)("$spec | $variants", (row) => {
    const variants = row.variants.map((text) => ({ text, constraints: fromText(text) }));
    expect(findOverlaps(variants).map((o) => [o.first.text, o.second.text])).toEqual(row.overlaps);
    expect(checkBestPractices(variants).map((w) => w.kind)).toEqual(row.warnings);
  });
});

describe("golden: DPDS parameter derivation", () => {
  it.each(DERIVE_ROWS)("$spec | $constraints", (row) => {
    const e = fromText(row.constraints);
    if ("error" in row.expected) expect(() => deriveParameters(e)).toThrow(row.expected.error as string);
    else expect(deriveParameters(e)).toEqual(row.expected);
  });
});

describe("golden: TP2 draft matching", () => {
  it.each(DRAFT_MATCH_ROWS)("$spec | $parameters → $expected", (row) => {
    const e = fromDraft(row.constraints);
    expect(matches(e, row.parameters)).toBe(row.expected);
    expect(compile(e)(asMap(row.parameters))).toBe(row.expected);
  });
});

describe("golden: TP2 draft variant selection", () => {
  it.each(DRAFT_SELECT_ROWS)("$spec → $expected", (row) => {
    const candidates = Object.entries(row.variants).map(([name, parameters]) => ({ value: name, parameters }));
    const e = fromDraft(row.constraints);
    expect(selectAllDraftVariants(e, candidates).map((c) => c.value)).toEqual(row.expected);
    const s = selectDraftVariant(e, candidates);
    expect(s?.variant.value).toBe(row.expected[0]);
    expect(s?.ambiguous.map((c) => c.value) ?? []).toEqual(row.expected.slice(1));
  });

  it("seed Dynamic Route Selection, first table: 9 variants, each client gets exactly its own", () => {
    const candidates = ENVS.flatMap((env) =>
      VERSIONS.map((version) => ({ value: ROUTE_CONTENTS(env, version), parameters: { env, version } })),
    );
    for (const env of ENVS) {
      for (const version of VERSIONS) {
        const all = selectAllDraftVariants(fromDraft(exact({ env, version })), candidates);
        expect(all.map((c) => c.parameters)).toEqual([{ env, version }]);
        expect(all[0]?.value).toBe(ROUTE_CONTENTS(env, version));
      }
    }
  });

  it("seed Dynamic Route Selection, second table: DPDS constraints with `invert` pick one of 4 variants", () => {
    const candidates = INVERT_TABLE.map((row) => ({ value: row.contents, parameters: row.parameters }));
    for (const row of INVERT_TABLE) {
      const all = selectAllDraftVariants(fromDraft(row.constraints), candidates);
      expect(all.map((c) => c.parameters)).toEqual([row.parameters]);
    }
    // Node metadata → the table's DPDS constraints → the variant: same contents as the first table.
    for (const env of ENVS) {
      for (const version of VERSIONS) {
        const row = INVERT_TABLE.find((r) => r.prod === (env === "prod") && r.v1 === (version === "v1"))!;
        expect(selectDraftVariant(fromDraft(row.constraints), candidates)?.variant.value).toBe(
          ROUTE_CONTENTS(env, version),
        );
      }
    }
  });
});
