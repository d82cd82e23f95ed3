// The request messages of a streaming call, kept so a later attempt can send them again (A6's retry buffer, for
// A44 retries and transparent retries of streams). The caller's iterable is read once, by whichever attempt needs
// the next message first; every attempt reads the same sequence from the start. Once the call is committed no
// message is kept any more: the committed attempt reads the rest straight through. See
// docs/decisions.md#policies-retry.

export interface RequestReplay<T> {
  /** Whether messages are no longer kept: no further attempt can be made. */
  readonly committed: boolean;
  /**
   * The input of a new attempt: every message read so far, then the rest of the caller's. The previous attempt's
   * input ends (its stream is abandoned); ending an attempt's input early (connect does when an attempt fails)
   * leaves the caller's iterable open for the next attempt, unless the call is committed.
   */
  attempt(): AsyncIterable<T>;
  /** No further attempt: messages already read and not yet sent stay until the current attempt takes them. */
  commit(): void;
  /** The call failed for good: the caller's iterable is ended (`return()`) unless it was read to its end. */
  close(): void;
}

export function createRequestReplay<T>(source: AsyncIterable<T>): RequestReplay<T> {
  let iterator: AsyncIterator<T> | undefined;
  /** Messages read from the source, `kept[0]` being message number `base`. */
  const kept: T[] = [];
  let base = 0;
  let keeping = true;
  let ended = false;
  let failure: { readonly error: unknown } | undefined;
  let closed = false;
  let pulling: Promise<void> | undefined;
  let generation = 0;

  const closeSource = () => {
    if (closed) return;
    closed = true;
    if (!ended && failure === undefined) void iterator?.return?.()?.catch(() => {});
  };

  /** Reads one more message from the source (one read at a time, shared by every attempt). */
  const pull = (): Promise<void> => {
    pulling ??= (async () => {
      try {
        iterator ??= source[Symbol.asyncIterator]();
        const result = await iterator.next();
        if (result.done === true) ended = true;
        else kept.push(result.value);
      } catch (error) {
        failure = { error };
      } finally {
        pulling = undefined;
      }
    })();
    return pulling;
  };

  return {
    get committed() {
      return !keeping;
    },
    attempt() {
      const mine = ++generation;
      let position = base;
      let finished = false;
      const next = async (): Promise<IteratorResult<T>> => {
        for (;;) {
          if (finished || mine !== generation || closed) return { done: true, value: undefined };
          if (position < base) position = base;
          const index = position - base;
          if (index < kept.length) {
            const value = kept[index] as T;
            position++;
            // Committed: what this (the last) attempt took is not needed again.
            if (!keeping) {
              kept.splice(0, position - base);
              base = position;
            }
            return { done: false, value };
          }
          if (failure !== undefined) throw failure.error;
          if (ended) return { done: true, value: undefined };
          await pull();
        }
      };
      return {
        [Symbol.asyncIterator]: () => ({
          next,
          return: (value?: unknown) => {
            finished = true;
            if (!keeping && mine === generation) closeSource();
            return Promise.resolve({ done: true as const, value: value as T });
          },
          // connect forwards a failure of the request stream here. Before the commit it ends only this attempt's
          // input; after it, the caller's iterable gets it, as it would from connect directly.
          throw: (error?: unknown) => {
            finished = true;
            if (
              keeping ||
              mine !== generation ||
              closed ||
              ended ||
              failure !== undefined ||
              iterator?.throw === undefined
            ) {
              if (!keeping && mine === generation) closeSource();
              return Promise.resolve({ done: true as const, value: undefined as T });
            }
            closed = true;
            return iterator.throw(error).catch(() => ({ done: true as const, value: undefined as T }));
          },
        }),
      };
    },
    commit() {
      keeping = false;
    },
    close() {
      keeping = false;
      kept.length = 0;
      closeSource();
    },
  };
}
