/**
 * Runs the flushes that streams ask for in one synchronous run together, in one microtask, in the order asked.
 * A change to a resource many streams hold marks each of them dirty: one microtask for all of them rather than one
 * per stream. A flush asked for while the batch runs goes in the next batch, one microtask later, as it did with a
 * microtask of its own. A flush that throws does not keep the others from running.
 *
 * The microtask is a resolved promise's reaction rather than `queueMicrotask`: the same queue, but Node wraps each
 * `queueMicrotask` callback in an async resource (seven functions of its own, which a server's first change would
 * also have to compile).
 */
export interface FlushBatch {
  schedule(flush: () => void): void;
}

const resolved = Promise.resolve();

export function createFlushBatch(onError: (error: unknown) => void): FlushBatch {
  let queued: (() => void)[] = [];
  const run = (): void => {
    const batch = queued;
    queued = [];
    for (const flush of batch) {
      try {
        flush();
      } catch (error) {
        onError(error);
      }
    }
  };
  return {
    schedule(flush) {
      if (queued.push(flush) === 1) resolved.then(run);
    },
  };
}
