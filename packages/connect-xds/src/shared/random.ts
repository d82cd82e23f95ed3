// The data path's uniform draws (weighted clusters, locality weights, runtime fractions, drops). Math.random boxes
// its result (a 16-byte heap number per call); so does any function returning a fractional double when the JIT does
// not inline the call, which happens once a call site sees several closures (several transports, several policy
// trees). So picks draw integers (`intDraw`): a generator object keeps its state in an int32 and returns an
// integer below 2^31, which is never boxed. Marsaglia's xorshift32 (shifts 13, 17, 5; period 2^32 - 1): uniform
// enough to spread calls, not for anything secret.

class Xorshift32 {
  private state: number;
  constructor(seed: number) {
    this.state = seed | 0 || 0x2545f491;
  }
  private step(): number {
    let s = this.state;
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    this.state = s;
    return (s >>> 0) / 4294967296;
  }
  next(): number {
    return this.step();
  }
  /**
   * The step written out again, and the floor too, so no fractional double is ever returned from or passed to a
   * call (where the JIT does not inline the callee, such a double is boxed).
   */
  int(bound: number): number {
    let s = this.state;
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    this.state = s;
    const value = ((s >>> 0) / 4294967296) * bound;
    return bound <= 0x7fffffff ? value | 0 : Math.floor(value);
  }
}

/**
 * `floor(value)` for 0 <= value < bound, as an int32 when the bound allows (`| 0`): an int32 result is returned as a
 * small integer, where a float64 one, integral or not, may be boxed.
 */
function toInt(value: number, bound: number): number {
  return bound <= 0x7fffffff ? value | 0 : Math.floor(value);
}

/** The generator behind each function `createUniform` returned, so `intDraw` can use it directly. */
const generators = new WeakMap<() => number, Xorshift32>();

/** A uniform draw in [0, 1), seeded from `seed` (any non-zero int32; 0 is replaced). */
export function createUniform(seed: number = (Math.random() * 0x7fffffff) | 0): () => number {
  const generator = new Xorshift32(seed);
  const uniform = () => generator.next();
  generators.set(uniform, generator);
  return uniform;
}

/**
 * A uniform integer in [0, bound) drawn from `random`: straight from the generator when `random` came from
 * `createUniform` (nothing allocated per draw), else `floor(random() * bound)` (tests inject fixed sequences).
 */
export function intDraw(random: () => number): (bound: number) => number {
  const generator = generators.get(random);
  return generator === undefined ? (bound) => toInt(random() * bound, bound) : (bound) => generator.int(bound);
}
