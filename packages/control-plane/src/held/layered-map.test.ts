// LayeredMap must read as the plain Map the same edits would give, whatever the sequence and however layers stack.
import fc from "fast-check";
import { expect, test } from "vitest";
import { LayeredMap } from "./layered-map.js";

const name = fc.constantFrom(...Array.from({ length: 40 }, (_, i) => `n${i}`));
const edit = fc.record({
  set: fc.array(fc.tuple(name, fc.integer({ min: 0, max: 5 })), { maxLength: 12 }),
  remove: fc.array(name, { maxLength: 6 }),
});

test("a chain of edits reads as the same edits on a plain Map", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(name, fc.nat(5)), { maxLength: 60 }),
      fc.array(edit, { maxLength: 30 }),
      (start, edits) => {
        let layered = LayeredMap.of(start);
        const plain = new Map(start);
        const versions = [layered];
        for (const { set, remove } of edits) {
          const before = new Map(plain);
          layered = layered.with(
            set.map(([k]) => k),
            set.map(([, v]) => v),
            remove,
          );
          for (const [k, v] of set) plain.set(k, v);
          for (const k of remove) plain.delete(k);
          versions.push(layered);
          // An edit of which no part changes anything gives the same map back.
          if (set.every(([k, v]) => before.get(k) === v) && remove.every((k) => !before.has(k))) {
            expect(layered).toBe(versions.at(-2));
          }
          expect(layered.size).toBe(plain.size);
          expect(new Map(layered)).toEqual(plain);
          for (let i = 0; i < 40; i++) {
            expect(layered.get(`n${i}`)).toBe(plain.get(`n${i}`));
            expect(layered.has(`n${i}`)).toBe(plain.has(`n${i}`));
          }
        }
        // Older versions are untouched by later edits.
        let replay = new Map(start);
        expect(new Map(versions[0])).toEqual(replay);
        edits.forEach(({ set, remove }, i) => {
          replay = new Map(replay);
          for (const [k, v] of set) replay.set(k, v);
          for (const k of remove) replay.delete(k);
          expect(new Map(versions[i + 1])).toEqual(replay);
        });
      },
    ),
  );
}, 60_000); // CPU-bound property: about 1 s alone, 5 s with the machine busy

test("a name changed in place keeps its position in iteration", () => {
  const map = LayeredMap.of([
    ["a", 1],
    ["b", 2],
    ["c", 3],
  ]).with(["b", "d"], [20, 4]);
  expect([...map.keys()]).toEqual(["a", "b", "c", "d"]);
  expect([...map.values()]).toEqual([1, 20, 3, 4]);
});
