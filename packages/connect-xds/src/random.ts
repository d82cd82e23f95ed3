// The data path's uniform draws (weighted clusters, locality weights, runtime fractions, drops). Math.random boxes
// its result (about 16 bytes a call), which would make every pick allocate; this generator keeps its state in an
// int32 and, once inlined into a picker, returns an unboxed double. Marsaglia's xorshift32 (shifts 13, 17, 5;
// period 2^32 - 1): uniform enough to spread calls, not for anything secret.

/** A uniform draw in [0, 1), seeded from `seed` (any non-zero int32; 0 is replaced). */
export function createUniform(seed: number = (Math.random() * 0x7fffffff) | 0): () => number {
  let state = seed | 0 || 0x2545f491;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
}
