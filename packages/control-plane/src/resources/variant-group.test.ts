// A VariantGroup holds one entry without a Map and several in one: whatever the sequence of sets and deletes, it
// reads as a plain Map by canonical text would (size, lookups, order of last setting) and chooses as the matcher's
// index over the same variants would.
import { createVariantIndex, fromText, type Params, TRUE } from "@xdskit/constraint-matcher";
import fc from "fast-check";
import { expect, test } from "vitest";
import type { Entry } from "./entry.js";
import { parseConstraints, readConstraints, VariantGroup, variantRef } from "./variant-group.js";

const TEXTS = ["", "env=prod", "env=test", "env=prod && zone=a"];
const refs = new Map(TEXTS.map((text) => [text, text === "" ? undefined : variantRef("n", fromText(text))]));
const entry = (text: string, version: number): Entry => ({
  kind: "error",
  typeUrl: "t",
  name: "n",
  version,
  variant: refs.get(text),
  allowOverlap: true,
  status: { $typeName: "google.rpc.Status", code: 2, message: "", details: [] },
});
const PARAMS: (Params | undefined)[] = [
  undefined,
  { env: "prod" },
  { env: "test" },
  { env: "prod", zone: "a" },
  { zone: "a" },
];

test("a group reads as a Map by canonical text and chooses as the index", () => {
  const op = fc.tuple(fc.boolean(), fc.constantFrom(...TEXTS), fc.nat(9));
  fc.assert(
    fc.property(fc.array(op, { maxLength: 20 }), (ops) => {
      const group = new VariantGroup("n");
      const model = new Map<string, Entry>();
      for (const [isSet, text, version] of ops) {
        if (isSet) {
          const e = entry(text, version);
          group.set(e);
          model.delete(text);
          model.set(text, e);
        } else {
          expect(group.delete(text)).toBe(model.get(text));
          model.delete(text);
        }
        expect(group.size).toBe(model.size);
        expect([...group.values()]).toEqual([...model.values()]);
        for (const t of TEXTS) expect(group.get(t)).toBe(model.get(t));
        const index = createVariantIndex<Entry>();
        for (const e of model.values()) index.add(e.variant?.constraints ?? TRUE, e);
        for (const params of PARAMS) {
          expect(group.choose(params)).toBe(index.select(params ?? {})?.variant.value);
        }
      }
    }),
  );
});

// readConstraints keeps the canonical form of each text it parsed: whatever the texts (parsable or not) and the
// order they come in, it returns what parsing afresh returns, and fails with the same message where that fails.
test("constraints read from text equal the text parsed afresh", () => {
  const token = fc.constantFrom("a", "b", "=", "x", "y", "&&", "||", "!", "(", ")", "exists(", "true", " ", "in[1,2]");
  const soup = fc.array(token, { maxLength: 8 }).map((tokens) => tokens.join(""));
  const atom = fc.oneof(
    fc.tuple(fc.constantFrom("a", "b"), fc.constantFrom("x", "y")).map(([k, v]) => `${k}=${v}`),
    fc.constantFrom("exists(a)", "exists(b)", "true", "!true"),
  );
  const formula = fc
    .tuple(fc.array(atom, { minLength: 1, maxLength: 3 }), fc.constantFrom(" && ", " || ", "&&"), fc.boolean())
    .map(([atoms, op, not]) => (not ? `!(${atoms.join(op)})` : atoms.join(op)));
  const text = fc.oneof(soup, formula);
  const outcome = (read: () => unknown) => {
    try {
      return { ok: read() };
    } catch (error) {
      return { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
    }
  };
  fc.assert(
    fc.property(fc.array(text, { maxLength: 12 }), (texts) => {
      for (const t of [...texts, ...texts]) {
        expect(outcome(() => readConstraints(t, "r"))).toEqual(outcome(() => parseConstraints(t, "r")));
      }
    }),
  );
});
