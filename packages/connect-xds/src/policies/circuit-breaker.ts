// Circuit breaking (A32): the in-flight count cluster_impl checks against `max_requests` on each pick. Counters are
// shared by every transport in the process, keyed by cluster and EDS service name, as gRPC does.
// See docs/decisions.md#policies-circuit-breaking.

/** The default `max_requests` (CDS `circuit_breakers.thresholds` with priority DEFAULT). */
export const DEFAULT_MAX_REQUESTS = 1024;

/** In-flight calls of one cluster across the process. */
export interface RequestCounter {
  readonly inFlight: number;
  /** A call started (after its pick found fewer than `max_requests` in flight). */
  start(): void;
  /** A counted call ended. */
  end(): void;
}

const counters = new Map<string, { counter: RequestCounter; users: number }>();

function createRequestCounter(): RequestCounter {
  let inFlight = 0;
  return {
    get inFlight() {
      return inFlight;
    },
    start() {
      inFlight++;
    },
    end() {
      if (inFlight > 0) inFlight--;
    },
  };
}

/**
 * The process-wide counter of `cluster` (and its EDS service name, when set), and the function that gives it
 * back; the counter is forgotten when its last user gives it back with nothing in flight.
 */
export function acquireRequestCounter(
  cluster: string,
  edsServiceName = "",
): { counter: RequestCounter; unref: () => void } {
  const key = `${cluster}\u0000${edsServiceName}`;
  let slot = counters.get(key);
  if (slot === undefined) {
    slot = { counter: createRequestCounter(), users: 0 };
    counters.set(key, slot);
  }
  slot.users++;
  const held = slot;
  let done = false;
  return {
    counter: held.counter,
    unref() {
      if (done) return;
      done = true;
      held.users--;
      if (held.users === 0 && held.counter.inFlight === 0) counters.delete(key);
    },
  };
}
