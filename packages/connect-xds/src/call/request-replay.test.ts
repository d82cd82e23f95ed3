import { describe, expect, it } from "vitest";
import { createRequestReplay } from "./request-replay.js";

/** A source that counts reads and whether it was ended early. */
function source(values: readonly string[]) {
  const state = { reads: 0, returned: false };
  const iterable: AsyncIterable<string> = {
    [Symbol.asyncIterator]() {
      let i = 0;
      return {
        next: async () => {
          state.reads++;
          return i < values.length ? { done: false, value: values[i++] as string } : { done: true, value: undefined };
        },
        return: async () => {
          state.returned = true;
          return { done: true, value: undefined };
        },
      };
    },
  };
  return { iterable, state };
}

async function take(iterator: AsyncIterator<string>, count: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const result = await iterator.next();
    if (result.done === true) break;
    out.push(result.value);
  }
  return out;
}

describe("request replay", () => {
  it("gives every attempt the same messages, reading the source once", async () => {
    const { iterable, state } = source(["a", "b", "c"]);
    const replay = createRequestReplay(iterable);
    const first = replay.attempt()[Symbol.asyncIterator]();
    expect(await take(first, 2)).toEqual(["a", "b"]);
    const second = replay.attempt()[Symbol.asyncIterator]();
    // The superseded attempt's input ends; the new one starts from the first message.
    expect(await first.next()).toEqual({ done: true, value: undefined });
    expect(await take(second, 10)).toEqual(["a", "b", "c"]);
    expect(state.reads).toBe(4);
    expect(state.returned).toBe(false);
  });

  it("keeps the source open when an uncommitted attempt's input is ended, and ends it once committed", async () => {
    const { iterable, state } = source(["a", "b", "c"]);
    const replay = createRequestReplay(iterable);
    const first = replay.attempt()[Symbol.asyncIterator]();
    await take(first, 1);
    await first.return?.();
    expect(state.returned).toBe(false);
    const second = replay.attempt()[Symbol.asyncIterator]();
    expect(await take(second, 1)).toEqual(["a"]);
    replay.commit();
    expect(replay.committed).toBe(true);
    expect(await take(second, 1)).toEqual(["b"]);
    await second.return?.();
    expect(state.returned).toBe(true);
  });

  it("ends the source when the call fails for good, not when it was read to its end", async () => {
    const open = source(["a", "b"]);
    const failing = createRequestReplay(open.iterable);
    await take(failing.attempt()[Symbol.asyncIterator](), 1);
    failing.close();
    expect(open.state.returned).toBe(true);
    const read = source(["a"]);
    const done = createRequestReplay(read.iterable);
    expect(await take(done.attempt()[Symbol.asyncIterator](), 5)).toEqual(["a"]);
    done.close();
    expect(read.state.returned).toBe(false);
  });

  it("hands the source's error to the attempt reading past it", async () => {
    const failing: AsyncIterable<string> = {
      async *[Symbol.asyncIterator]() {
        yield "a";
        throw new Error("the caller's input broke");
      },
    };
    const replay = createRequestReplay(failing);
    const attempt = replay.attempt()[Symbol.asyncIterator]();
    expect(await attempt.next()).toEqual({ done: false, value: "a" });
    await expect(attempt.next()).rejects.toThrow("the caller's input broke");
    // A later attempt sees the same: the message, then the error.
    const again = replay.attempt()[Symbol.asyncIterator]();
    expect(await again.next()).toEqual({ done: false, value: "a" });
    await expect(again.next()).rejects.toThrow("the caller's input broke");
  });

  it("reads a message once when two attempts wait for it together", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let reads = 0;
    const slow: AsyncIterable<string> = {
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          reads++;
          await gate;
          return { done: false, value: `m${reads}` };
        },
      }),
    };
    const replay = createRequestReplay(slow);
    const old = replay.attempt()[Symbol.asyncIterator]();
    const pending = old.next();
    const fresh = replay.attempt()[Symbol.asyncIterator]();
    const wanted = fresh.next();
    release();
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(await wanted).toEqual({ done: false, value: "m1" });
    expect(reads).toBe(1);
  });
});
