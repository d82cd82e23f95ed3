// Per-attempt message byte counts (A66's sent/received compressed message sizes), whether the attempt's response
// headers arrived (A6's commit point), and how a call hands its counter to the endpoint transport that starts it
// (endpoint-transport.ts, grpc-unary-call.ts).

/** Compressed message bytes of one attempt, gRPC's 5-byte message prefixes excluded. */
export class MessageByteCounter {
  sent = 0;
  received = 0;
  /** Called as request bytes are counted, with the total so far (the retry buffer reserves them). */
  onSent: ((total: number) => void) | undefined = undefined;
  /**
   * The server sent response headers that did not end the stream: it started answering, so the attempt is committed
   * (A6) and is not retried. Not set by a Trailers-Only response (the status in the only header block).
   */
  responseHeaders = false;
  /** Response messages begun (their length prefix read). */
  responseMessages = 0;
}

/**
 * The counter of the attempt being started. The lean unary call takes it at once in `unary()`; connect's gRPC
 * transport calls its HTTP client synchronously inside `stream()` (and `unary()` on the slow path) when it has no
 * interceptors (ours never has), so the call path sets this right before and the HTTP client takes it;
 * `test/metrics.test.ts` fails if a connect release changes that.
 */
let handoff: MessageByteCounter | undefined;

/** Runs `start` (which starts one call on an endpoint transport) with `counter` counting its bytes. */
export function countingBytes<T>(counter: MessageByteCounter, start: () => T): T {
  handoff = counter;
  try {
    return start();
  } finally {
    handoff = undefined;
  }
}

/** The counter `countingBytes` handed to the call being started, once (the next take gives nothing). */
export function takeCounter(): MessageByteCounter | undefined {
  const counter = handoff;
  handoff = undefined;
  return counter;
}
