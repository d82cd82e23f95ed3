/**
 * The regression check's small sizes (check/run-check.ts sets XDSKIT_BENCH_SMALL=1 for the benchmarks it runs, and
 * their child processes inherit it): a benchmark that honours it runs a tenth of its usual size.
 */
export const smallRun = process.env.XDSKIT_BENCH_SMALL === "1";
