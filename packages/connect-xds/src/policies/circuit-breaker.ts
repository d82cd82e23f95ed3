// Circuit breaking (A32) and EDS drop_overloads: what cluster_impl checks before a pick. Counters are shared by
// every transport in the process, keyed by cluster and EDS service name, as gRPC does.
// See docs/decisions.md#policies-circuit-breaking.

/** The default `max_requests` (CDS `circuit_breakers.thresholds` with priority DEFAULT). */
export const DEFAULT_MAX_REQUESTS = 1024;

/** In-flight calls of one cluster across the process. */
export interface RequestCounter {
  readonly inFlight: number;
  /** Counts one more call unless `maxRequests` are already in flight; false means drop it (UNAVAILABLE). */
  tryAcquire(maxRequests: number): boolean;
  /** A counted call ended. */
  release(): void;
}

const counters = new Map<string, { counter: RequestCounter; users: number }>();

function createRequestCounter(): RequestCounter {
  let inFlight = 0;
  return {
    get inFlight() {
      return inFlight;
    },
    tryAcquire(maxRequests) {
      if (inFlight >= maxRequests) return false;
      inFlight++;
      return true;
    },
    release() {
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

/** One `drop_overloads` entry: its category and drops per million calls. */
export interface DropCategory {
  readonly category: string;
  readonly dropsPerMillion: number;
}

/**
 * The category a call is dropped under, or undefined to let it through: each category in order draws its own
 * integer in [0, 1,000,000) and drops the call when the draw is below its rate (C-core's and grpc-go's order).
 */
export function pickDropCategory(drops: readonly DropCategory[], random: () => number): string | undefined {
  for (let i = 0; i < drops.length; i++) {
    const d = drops[i] as DropCategory;
    if (Math.floor(random() * 1_000_000) < d.dropsPerMillion) return d.category;
  }
  return undefined;
}
