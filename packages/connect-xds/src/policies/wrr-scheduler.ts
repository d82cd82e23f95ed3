// The static stride scheduler of client_side_weighted_round_robin (A58): earliest-deadline-first picks
// approximated with one shared sequence number and 16-bit weights, as gRPC C-core's scheduler does.
// See docs/decisions.md#policies-wrr.

/** Weights are scaled so the largest is this. */
export const WRR_MAX_WEIGHT = 65_535;
/** A known weight above this multiple of the mean is lowered to it (bounds the skipped rounds per pick). */
export const WRR_MAX_RATIO = 10;
/** A known weight below this fraction of the mean is raised to it. */
export const WRR_MIN_RATIO = 0.01;
const OFFSET = Math.floor(WRR_MAX_WEIGHT / 2);

export interface StrideScheduler {
  /** The scaled weights, in endpoint order. */
  readonly weights: Uint16Array;
  /** The next endpoint index; allocation-free. */
  pick(): number;
}

/**
 * A scheduler for `weights` (0 = unknown), or undefined when fewer than two weights are known: the caller then
 * falls back to round robin (A58; A78 counts it as `grpc.lb.wrr.rr_fallback`). Unknown weights get the mean of
 * the known ones. `nextSequence` returns a 32-bit counter that each call advances (the picker's, started at a
 * random value).
 */
export function createStrideScheduler(
  weights: ArrayLike<number>,
  nextSequence: () => number,
): StrideScheduler | undefined {
  const n = weights.length;
  let known = 0;
  let sum = 0;
  let max = 0;
  for (let i = 0; i < n; i++) {
    const w = weights[i] as number;
    if (!(w >= 0) || !Number.isFinite(w))
      throw new Error(`WRR weight ${w} at ${i} is not a finite non-negative number`);
    if (w > 0) {
      known++;
      sum += w;
      if (w > max) max = w;
    }
  }
  if (known < 2) return undefined;
  const mean = sum / known;
  const cappedMax = Math.min(max, mean * WRR_MAX_RATIO);
  const scale = WRR_MAX_WEIGHT / cappedMax;
  const scaledMean = Math.round(scale * mean);
  const lowerBound = Math.max(1, Math.round(scaledMean * WRR_MIN_RATIO));
  const scaled = new Uint16Array(n);
  for (let i = 0; i < n; i++) {
    const w = weights[i] as number;
    scaled[i] = w === 0 ? scaledMean : Math.max(lowerBound, Math.round(Math.min(w, cappedMax) * scale));
  }
  return {
    weights: scaled,
    pick() {
      // The sequence splits into an endpoint (sequence mod n) and a generation (sequence div n); endpoint i is
      // taken in `weight_i` of every WRR_MAX_WEIGHT generations, spread by the multiply and offset by i so equal
      // weights do not skip together. Every weight is ≥ 1, so the loop ends.
      for (;;) {
        const sequence = nextSequence();
        const index = sequence % n;
        const generation = Math.floor(sequence / n);
        const weight = scaled[index] as number;
        const mod = (weight * generation + index * OFFSET) % WRR_MAX_WEIGHT;
        if (mod >= WRR_MAX_WEIGHT - weight) return index;
      }
    },
  };
}

/** A 32-bit wrapping counter starting at `start` (the picker's sequence). */
export function createSequence(start: number): () => number {
  let next = start >>> 0;
  return () => {
    const value = next;
    next = (next + 1) >>> 0;
    return value;
  };
}
