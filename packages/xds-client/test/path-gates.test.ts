// The RBAC engine's one-pass path tests (src/mesh/path-gates.ts) against the plain string methods, over texts from
// a tiny alphabet so that texts overlap, nest and repeat (the cases an Aho-Corasick automaton's failure links are
// for), and paths in any case.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compilePathGates, type PathGate } from "../src/mesh/path-gates.js";

function plainPasses(gate: PathGate, path: string): boolean {
  const subject = gate.lower ? path.toLowerCase() : path;
  switch (gate.kind) {
    case "exact":
      return subject === gate.text;
    case "prefix":
      return subject.startsWith(gate.text);
    case "suffix":
      return subject.endsWith(gate.text);
    case "contains":
      return subject.includes(gate.text);
  }
}

const text = fc.string({ unit: fc.constantFrom("a", "b", "/"), minLength: 1, maxLength: 4 });
const gate: fc.Arbitrary<PathGate> = fc
  .record({ kind: fc.constantFrom("exact", "prefix", "suffix", "contains" as const), text, lower: fc.boolean() })
  .map((g) => g as PathGate);
const path = fc.string({ unit: fc.constantFrom("a", "b", "A", "B", "/"), maxLength: 10 });

describe("path gates", () => {
  it("pass exactly the gates the plain string tests pass (property)", () => {
    fc.assert(
      fc.property(fc.array(gate, { maxLength: 12 }), fc.array(path, { minLength: 1, maxLength: 4 }), (gates, paths) => {
        const compiled = compilePathGates(gates)!;
        for (const p of paths) {
          const count = compiled.run(p);
          const expected = gates.flatMap((g, i) => (plainPasses(g, p) ? [i] : []));
          expect([...compiled.hits.subarray(0, count)]).toEqual(expected);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("finds texts that overlap and nest: a suffix inside a longer text, a prefix that is also found later", () => {
    const gates: PathGate[] = [
      { kind: "contains", text: "abab", lower: false },
      { kind: "suffix", text: "ba", lower: false },
      { kind: "prefix", text: "ab", lower: false },
      { kind: "exact", text: "ababa", lower: false },
      { kind: "contains", text: "bab", lower: true },
    ];
    const compiled = compilePathGates(gates)!;
    const passed = (path: string) => [...compiled.hits.subarray(0, compiled.run(path))];
    expect(passed("ababa")).toEqual([0, 1, 2, 3, 4]);
    expect(passed("bababx")).toEqual([0, 4]);
    expect(passed("ABABA")).toEqual([4]);
  });
});
