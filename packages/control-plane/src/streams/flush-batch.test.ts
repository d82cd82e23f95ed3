import { expect, test } from "vitest";
import { createFlushBatch } from "./flush-batch.js";

const microtask = (): Promise<void> => new Promise((resolve) => queueMicrotask(resolve));

test("flushes asked for in one run go together in one microtask, in order, each once asked", async () => {
  const errors: unknown[] = [];
  const batch = createFlushBatch((error) => errors.push(error));
  const ran: string[] = [];
  // A microtask queued before the flushes runs before them; one queued after, after all of them.
  queueMicrotask(() => ran.push("before"));
  batch.schedule(() => ran.push("a"));
  batch.schedule(() => {
    ran.push("b");
    // Asked for while the batch runs: the next batch.
    batch.schedule(() => ran.push("d"));
    throw new Error("b failed");
  });
  batch.schedule(() => ran.push("c"));
  queueMicrotask(() => ran.push("after"));
  expect(ran).toEqual([]);
  await microtask();
  await microtask();
  expect(ran).toEqual(["before", "a", "b", "c", "after", "d"]);
  expect(errors).toEqual([new Error("b failed")]);
});
