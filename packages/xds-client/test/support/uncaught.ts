// Counting what escapes to `process.on("uncaughtException")` while a test file runs, and waiting on a condition
// driven by I/O (polls every 10 ms, bounded).
import { afterAll, beforeAll } from "vitest";

/** Registers a counting `uncaughtException` listener for the file's tests; `count()` is the number seen so far. */
export function countUncaught(): { count(): number; errors: unknown[] } {
  const errors: unknown[] = [];
  const listener = (error: unknown) => {
    errors.push(error);
  };
  beforeAll(() => {
    process.on("uncaughtException", listener);
  });
  afterAll(() => {
    process.off("uncaughtException", listener);
  });
  return { count: () => errors.length, errors };
}

/** Resolves once `condition()` holds; rejects after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
