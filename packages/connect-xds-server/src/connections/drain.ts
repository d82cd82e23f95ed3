// A36 draining of one HTTP/2 connection, with gRPC's two-phase GOAWAY: first a GOAWAY whose last stream id is the
// largest there is (the client stops opening streams on this connection, and the streams it has already sent are
// still taken), then a PING; once the client answers it, every stream it sent before the first GOAWAY has arrived,
// and Node's `session.close()` sends the final GOAWAY with the last stream the server took. Calls in flight finish;
// the session closes when the last one ends. A36 also allows one GOAWAY, which fails the calls racing it.
// The wait for the PING's answer is short (one round trip is all it needs) because Node's own HTTP/2 client (under
// Connect and grpc-js) goes silent after a GOAWAY when it has no stream open: it answers no PING and sends nothing,
// a request it queued stays queued, until the final GOAWAY refuses it (docs/decisions.md#xds-enabled-servers).
import { constants, type Http2Session } from "node:http2";

/** The largest HTTP/2 stream id: a GOAWAY naming it refuses no stream. */
const LAST_STREAM_ID = 2 ** 31 - 1;

/** How long the client has to answer the PING before the final GOAWAY is sent anyway. */
export const DRAIN_PING_TIMEOUT_MS = 1_000;

const draining = new WeakSet<Http2Session>();

/** Starts the two-phase GOAWAY on `session` (once; later calls do nothing). */
export function goawayTwoPhase(session: Http2Session): void {
  if (draining.has(session) || session.closed || session.destroyed) return;
  draining.add(session);
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    if (!session.closed && !session.destroyed) session.close();
  };
  const timer = setTimeout(finish, DRAIN_PING_TIMEOUT_MS);
  timer.unref();
  try {
    session.goaway(constants.NGHTTP2_NO_ERROR, LAST_STREAM_ID);
    if (!session.ping(() => finish())) finish();
  } catch {
    finish();
  }
}
