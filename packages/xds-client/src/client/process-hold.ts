// What keeps the Node process alive for a client: while it has watchers, one ref'd timer that never fires, as a gRPC
// channel with an active call keeps its process alive (docs/decisions.md#keeping-the-process-alive). Every other
// timer of the client is unref'd (clock.ts), and the HTTP/2 session is ref'd only while a stream is open, so without
// it a process that only watches would exit during the backoff after a failed connection.

/** Counts the client's live watches; holds the process open while there is one, until closed. */
export interface ProcessHold {
  acquire(): void;
  release(): void;
  /** Lets go for good: the client closed. */
  close(): void;
}

/** Longest delay Node's timers take (about 24.8 days); the timer exists only to be ref'd. */
const NEVER_MS = 2 ** 31 - 1;
const noop = (): void => {};

/** A hold that keeps the process alive when `enabled`, and only counts otherwise. */
export function createProcessHold(enabled: boolean): ProcessHold {
  let count = 0;
  let closed = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
  };
  return {
    acquire() {
      if (closed) return;
      count += 1;
      if (enabled && timer === undefined) timer = setInterval(noop, NEVER_MS);
    },
    release() {
      if (closed || count === 0) return;
      count -= 1;
      if (count === 0) stop();
    },
    close() {
      closed = true;
      count = 0;
      stop();
    },
  };
}
