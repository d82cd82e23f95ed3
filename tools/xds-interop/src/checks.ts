// What the cases assert about a block of RPCs. A check returns undefined when the block satisfies it, or a sentence
// saying what is wrong; the driver polls blocks with it or fails with that sentence and the block's counts.
import type { RpcMethod } from "./client-adapter.js";
import type { BlockStats } from "./load-client.js";

export type BlockCheck = (stats: BlockStats) => string | undefined;

/** A case's assertion failed: the message says which, and shows the block or event it judged. */
export class InteropAssertionError extends Error {
  override readonly name = "InteropAssertionError";
}

export function describeBlock(stats: BlockStats): string {
  const parts = [`by peer ${JSON.stringify(stats.rpcsByPeer)}`];
  if (Object.keys(stats.rpcsByMethod).length > 1) parts.push(`by method ${JSON.stringify(stats.rpcsByMethod)}`);
  parts.push(`failures ${stats.numFailures}${stats.numFailures > 0 ? ` ${JSON.stringify(stats.failureCodes)}` : ""}`);
  if (!stats.complete) parts.push("(timed out: partial)");
  return parts.join(", ");
}

export interface FailurePolicy {
  /** Failed RPCs in the block are allowed (the case does not run with `--fail_on_failed_rpcs`). Default false. */
  readonly allowFailures?: boolean;
}

function peersMismatch(counts: Readonly<Record<string, number>>, peers: readonly string[]): string | undefined {
  const missing = peers.filter((peer) => !(counts[peer] !== undefined && counts[peer] > 0));
  if (missing.length > 0) return `no RPC reached ${missing.join(", ")}`;
  const unexpected = Object.keys(counts).filter((peer) => !peers.includes(peer));
  if (unexpected.length > 0) return `RPCs reached ${unexpected.join(", ")}, which should get none`;
  return undefined;
}

function failuresProblem(stats: BlockStats, policy: FailurePolicy): string | undefined {
  if (!stats.complete) return "the block did not complete in time";
  return !policy.allowFailures && stats.numFailures > 0 ? `${stats.numFailures} RPCs failed` : undefined;
}

/** Every one of `peers` got at least one RPC and no other peer got any (run_xds_tests.py's `_verify_rpcs_to_given_backends`). */
export function allGoTo(peers: readonly string[], policy: FailurePolicy = {}): BlockCheck {
  return (stats) => failuresProblem(stats, policy) ?? peersMismatch(stats.rpcsByPeer, peers);
}

/** No RPC of the block succeeded. */
export function noneSucceed(): BlockCheck {
  return (stats) =>
    Object.keys(stats.rpcsByPeer).length > 0 ? `RPCs succeeded: ${JSON.stringify(stats.rpcsByPeer)}` : undefined;
}

/** For each method, exactly the given peers got its RPCs. */
export function methodsGoTo(
  expected: Readonly<Partial<Record<RpcMethod, readonly string[]>>>,
  policy: FailurePolicy = {},
): BlockCheck {
  return (stats) => {
    const failed = failuresProblem(stats, policy);
    if (failed) return failed;
    for (const [method, peers] of Object.entries(expected) as [RpcMethod, readonly string[]][]) {
      const problem = peersMismatch(stats.rpcsByMethod[method] ?? {}, peers);
      if (problem) return `${method}: ${problem}`;
    }
    return undefined;
  };
}

/**
 * Round robin over `peers`: no failure, and each peer got the block's share within `tolerance` RPCs. Round robin
 * over READY endpoints is deterministic, so run_xds_tests.py allows 1 (a block need not start at the rotation's
 * beginning).
 */
export function evenlySpread(peers: readonly string[], tolerance = 1): BlockCheck {
  return (stats) => {
    const problem = failuresProblem(stats, {}) ?? peersMismatch(stats.rpcsByPeer, peers);
    if (problem) return problem;
    const total = Object.values(stats.rpcsByPeer).reduce((a, b) => a + b, 0);
    const share = total / peers.length;
    const off = peers.filter((peer) => Math.abs((stats.rpcsByPeer[peer] ?? 0) - share) > tolerance);
    return off.length > 0
      ? `not an even split of ${total} (${share} each, ±${tolerance}): ${off.join(", ")}`
      : undefined;
  };
}

/**
 * The interval [low, high] that a Binomial(n, p) count falls outside of with probability at most `alpha` (at most
 * alpha/2 below, alpha/2 above), from the exact distribution (summed in log space, so n of many thousands is fine).
 */
export function binomialInterval(n: number, p: number, alpha: number): readonly [number, number] {
  if (!(Number.isInteger(n) && n >= 0 && p > 0 && p < 1 && alpha > 0 && alpha < 1)) {
    throw new RangeError(`binomialInterval(${n}, ${p}, ${alpha}): n an integer >= 0, p and alpha in (0, 1)`);
  }
  const pmf: number[] = [];
  let logPmf = n * Math.log1p(-p);
  const logOdds = Math.log(p) - Math.log1p(-p);
  for (let k = 0; k <= n; k++) {
    pmf.push(Math.exp(logPmf));
    logPmf += Math.log((n - k) / (k + 1)) + logOdds;
  }
  let low = 0;
  for (let below = 0; low < n && below + (pmf[low] ?? 0) <= alpha / 2; low++) below += pmf[low] ?? 0;
  let high = n;
  for (let above = 0; high > 0 && above + (pmf[high] ?? 0) <= alpha / 2; high--) above += pmf[high] ?? 0;
  return [low, high];
}

/**
 * Each peer's count is within the range (docs/decisions.md#xds-interop-driver) a per-RPC random pick with the given weights lands in with probability at
 * least 1 - alpha (each peer's count is Binomial(total, its share)), and no other peer got any.
 */
export function weightedSplit(weights: Readonly<Record<string, number>>, alpha: number): BlockCheck {
  return (stats) => {
    if (!stats.complete) return "the block did not complete in time";
    const peers = Object.keys(weights);
    const unexpected = Object.keys(stats.rpcsByPeer).filter((peer) => !peers.includes(peer));
    if (unexpected.length > 0) return `RPCs reached ${unexpected.join(", ")}, which should get none`;
    const total = Object.values(stats.rpcsByPeer).reduce((a, b) => a + b, 0);
    const weightSum = Object.values(weights).reduce((a, b) => a + b, 0);
    for (const peer of peers) {
      const [low, high] = binomialInterval(total, (weights[peer] ?? 0) / weightSum, alpha);
      const count = stats.rpcsByPeer[peer] ?? 0;
      if (count < low || count > high) return `${peer} got ${count} of ${total}, outside [${low}, ${high}]`;
    }
    return undefined;
  };
}
