// The server process's CPU time over one change of the control-plane benchmarks (user + system, every thread: GC and
// the compiler's background threads included), which a loaded machine moves far less than the wall-clock time the
// clients see; on Linux also the main thread's alone (from /proc's per-thread scheduler statistics, in nanoseconds):
// what the server's own code costs, without the compiles and GC work other threads do beside it. With
// XDSKIT_BENCH_PROFILE=<dir>, each measured window is also written as a CPU profile, `<dir>/<label>.cpuprofile`
// (100 us sampling; the profiler's own start and stop are outside the window).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";

const profileDir = process.env.XDSKIT_BENCH_PROFILE || undefined;
let session: Session | undefined;

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** The main thread's time on a CPU, ms; undefined where /proc does not tell it. */
function mainThreadMs(): number | undefined {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
  } catch {
    return undefined;
  }
}

export interface ChangeCpu<T> {
  readonly result: T;
  /** Every thread's. */
  readonly cpuMs: number;
  /** The main thread's; NaN where unknown. */
  readonly mainMs: number;
}

/** Runs `work` and returns its result with the process's CPU time meanwhile, ms. */
export async function withChangeCpu<T>(label: string, work: () => Promise<T>): Promise<ChangeCpu<T>> {
  if (profileDir !== undefined) {
    if (!session) {
      session = new Session();
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: 100 });
    }
    await session.post("Profiler.start");
  }
  const start = cpuMs();
  const mainStart = mainThreadMs() ?? Number.NaN;
  const result = await work();
  const mainMs = (mainThreadMs() ?? Number.NaN) - mainStart;
  const used = cpuMs() - start;
  if (session && profileDir !== undefined) {
    const { profile } = await session.post("Profiler.stop");
    mkdirSync(profileDir, { recursive: true });
    writeFileSync(join(profileDir, `${label}.cpuprofile`), JSON.stringify(profile));
  }
  return { result, cpuMs: used, mainMs };
}

/** A change's server CPU figures, ms: the first change, and the median of the later ones (`withChangeCpu`). */
export interface ChangeCpuFigures {
  readonly updateCpuMs: number;
  readonly laterUpdateCpuMs: number;
  /** The same, the main thread's alone. */
  readonly updateMainMs: number;
  readonly laterUpdateMainMs: number;
}

/** The rows the control-plane benches print for those figures, made by each bench's own `row`. */
export function changeCpuRows<R>(
  row: (label: string, ours: number, theirs: number) => R,
  ours: ChangeCpuFigures,
  theirs: ChangeCpuFigures,
): R[] {
  return [
    row("  server CPU time, first change", ours.updateCpuMs, theirs.updateCpuMs),
    row("  server CPU time, later changes (median)", ours.laterUpdateCpuMs, theirs.laterUpdateCpuMs),
    row("  server main thread, first change", ours.updateMainMs, theirs.updateMainMs),
    row("  server main thread, later changes (median)", ours.laterUpdateMainMs, theirs.laterUpdateMainMs),
  ];
}
