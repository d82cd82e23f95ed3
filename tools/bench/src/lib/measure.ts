// Timing helpers shared by the benchmarks. Wall-clock only; figures are for ratios within one run.

/** Written by every measured function so the JIT cannot drop the work. */
export let sink = 0;

export function consume(x: unknown): void {
  if (x === true || (typeof x === "object" && x !== null)) sink++;
}

export interface MeasureOptions {
  /** How long each sample runs at least. */
  readonly sampleMs?: number;
  readonly samples?: number;
}

/**
 * Operations per second of `op` (called with a counter), the median of several samples after a warm-up. Each
 * sample doubles its iteration count until it lasts `sampleMs`.
 */
export function opsPerSecond(op: (i: number) => void, options: MeasureOptions = {}): number {
  const sampleMs = options.sampleMs ?? 200;
  const samples = options.samples ?? 5;
  runFor(op, sampleMs);
  const rates: number[] = [];
  for (let s = 0; s < samples; s++) rates.push(runFor(op, sampleMs));
  rates.sort((a, b) => a - b);
  return rates[Math.floor(rates.length / 2)]!;
}

function runFor(op: (i: number) => void, ms: number): number {
  let iterations = 64;
  for (;;) {
    const start = performance.now();
    for (let i = 0; i < iterations; i++) op(i);
    const elapsed = performance.now() - start;
    if (elapsed >= ms) return (iterations / elapsed) * 1000;
    iterations *= elapsed < ms / 8 ? 8 : 2;
  }
}

/** The median of some figures (the upper one of an even count); the input is left as it is. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (middle === undefined) throw new Error("median of nothing");
  return middle;
}

/** Each figure's median over runs of one measurement (every run has the same keys). */
export function medianOfRuns<T extends { [K in keyof T]: number }>(runs: readonly T[]): T {
  const first = runs[0];
  if (first === undefined) throw new Error("median of no runs");
  const out = {} as T;
  for (const key of Object.keys(first) as (keyof T)[]) out[key] = median(runs.map((run) => run[key])) as T[keyof T];
  return out;
}
