// A36 draining of one HTTP/2 connection: GOAWAY at once (Node's `session.close()`: the last stream the server has
// seen stays the last it takes, so calls in flight finish and the client opens a new connection for new ones), then
// a forced close when the drain grace time ends. One GOAWAY, not gRPC's two-phase one (A36 allows either): a call
// racing the GOAWAY is refused with REFUSED_STREAM, which clients retry transparently.
import type { Http2Session } from "node:http2";

/** Node's longest timer; a longer grace time is clamped to it (about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Starts draining `session`; returns the function that cancels the forced close (once the session is gone). */
export function drainSession(session: Http2Session, graceMs: number): () => void {
  if (!session.closed && !session.destroyed) session.close();
  if (graceMs <= 0) {
    session.destroy();
    return () => {};
  }
  const timer = setTimeout(() => session.destroy(), Math.min(graceMs, MAX_TIMER_MS));
  timer.unref();
  return () => clearTimeout(timer);
}
