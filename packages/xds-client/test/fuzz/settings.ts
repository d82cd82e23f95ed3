// How long the fuzz properties run. `npm test` runs a short deterministic pass (fixed seed, a few hundred cases per
// property); the long run sets XDSKIT_FUZZ_RUNS (cases per property) and XDSKIT_FUZZ_SEED, e.g.
//   XDSKIT_FUZZ_RUNS=200000 XDSKIT_FUZZ_SEED=7 pnpm --filter @xdskit/xds-client fuzz
import type fc from "fast-check";

const DEFAULT_SEED = 20_260_810;

function positiveInteger(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === "") return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error(`${name} must be a non-negative integer, got "${text}"`);
  return value;
}

const runs = positiveInteger("XDSKIT_FUZZ_RUNS");
const seed = positiveInteger("XDSKIT_FUZZ_SEED") ?? DEFAULT_SEED;

/** True when the long run was asked for. */
export const longRun = runs !== undefined;

/**
 * fast-check parameters for a property: `defaultRuns` cases in the short run; in the long run XDSKIT_FUZZ_RUNS
 * divided by `costFactor` (for properties whose cases are much slower than a decode, such as a network round trip).
 */
export function fuzzParameters<T>(defaultRuns: number, costFactor = 1): fc.Parameters<T> {
  const numRuns = runs === undefined ? defaultRuns : Math.max(1, Math.floor(runs / costFactor));
  return { seed, numRuns };
}

/** A test timeout that leaves the long run unbounded. */
export const fuzzTimeoutMs = longRun ? 24 * 3_600_000 : 60_000;
