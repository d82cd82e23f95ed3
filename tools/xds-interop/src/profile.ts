// How big the cases run. `ci` (the default, in `npm test`) keeps every assertion of the document but samples small
// blocks; `full` (`pnpm --filter @xdskit/xds-interop interop:full`, XDSKIT_INTEROP_PROFILE=full) uses the
// document's rates and run_xds_tests.py's block size (10 x qps RPCs) and its deadline (20 s per RPC).

export interface InteropProfile {
  readonly name: "ci" | "full";
  /** RPCs per second of each type (the document: 100). */
  readonly qps: number;
  /** The rate of path_matching and header_matching (the document: 10). */
  readonly matchingQps: number;
  /** RPCs per block when polling for "all RPCs go to these backends" (run_xds_tests.py: 10 x qps). */
  readonly checkRpcs: number;
  /** The same for path_matching and header_matching (10 x their qps). */
  readonly matchingCheckRpcs: number;
  /** The block round_robin and backends_restart compare (the document: 100). */
  readonly evenRpcs: number;
  /** traffic_splitting's block that must all go to the first service (the document: 1000). */
  readonly splitSteadyRpcs: number;
  /** traffic_splitting's block whose split is measured (the document: 1000). */
  readonly splitRpcs: number;
  /** The deadline of every RPC (the document's client default: 20 s). */
  readonly rpcTimeoutMs: number;
  /** How long a polled condition may take to hold, and a client to answer a config change. */
  readonly waitMs: number;
  /** circuit_breaking's max_requests: UnaryCall's cluster, EmptyCall's, then UnaryCall's after the update. */
  readonly circuitBreaking: { readonly unary: number; readonly empty: number; readonly updated: number };
  /** The timeout case's durations (3 s route limit, 1 s deadline, 2 s and 4 s calls) are scaled by this. */
  readonly timeScale: number;
  /** The blocks the policy cases (fault percentage, WRR shares, ring_hash, retries, outlier) measure. */
  readonly policyRpcs: number;
  /** The test client's limit on RPCs in flight (load-client.ts), so a busy machine slows it instead of failing RPCs. */
  readonly maxInFlight: number;
  /** The chance, per weighted-split assertion, that a correct client's random picks fall outside the bounds. */
  readonly alpha: number;
}

export const CI_PROFILE: InteropProfile = {
  name: "ci",
  qps: 100,
  matchingQps: 100,
  checkRpcs: 20,
  matchingCheckRpcs: 20,
  evenRpcs: 100,
  splitSteadyRpcs: 100,
  splitRpcs: 500,
  rpcTimeoutMs: 10_000,
  waitMs: 45_000,
  maxInFlight: 20,
  circuitBreaking: { unary: 50, empty: 100, updated: 80 },
  timeScale: 0.25,
  policyRpcs: 200,
  alpha: 1e-6,
};

export const FULL_PROFILE: InteropProfile = {
  name: "full",
  qps: 100,
  matchingQps: 10,
  checkRpcs: 1000,
  matchingCheckRpcs: 100,
  evenRpcs: 100,
  splitSteadyRpcs: 1000,
  splitRpcs: 1000,
  rpcTimeoutMs: 20_000,
  waitMs: 300_000,
  maxInFlight: Number.POSITIVE_INFINITY,
  circuitBreaking: { unary: 500, empty: 1000, updated: 800 },
  timeScale: 1,
  policyRpcs: 1000,
  alpha: 1e-6,
};

export function profileFromEnv(env: NodeJS.ProcessEnv = process.env): InteropProfile {
  const name = env.XDSKIT_INTEROP_PROFILE ?? "ci";
  if (name === "ci") return CI_PROFILE;
  if (name === "full") return FULL_PROFILE;
  throw new Error(`XDSKIT_INTEROP_PROFILE must be "ci" or "full", not "${name}"`);
}
