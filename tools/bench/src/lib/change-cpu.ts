// The server process's CPU time over one change of the control-plane benchmarks (user + system, every thread: GC and
// the compiler's background threads included), which a loaded machine moves far less than the wall-clock time the
// clients see. With XDSKIT_BENCH_PROFILE=<dir>, each measured window is also written as a CPU profile,
// `<dir>/<label>.cpuprofile` (100 us sampling; the profiler's own start and stop are outside the window).
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";

const profileDir = process.env.XDSKIT_BENCH_PROFILE || undefined;
let session: Session | undefined;

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Runs `work` and returns its result with the process's CPU time meanwhile, ms. */
export async function withChangeCpu<T>(label: string, work: () => Promise<T>): Promise<{ result: T; cpuMs: number }> {
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
  const result = await work();
  const used = cpuMs() - start;
  if (session && profileDir !== undefined) {
    const { profile } = await session.post("Profiler.stop");
    mkdirSync(profileDir, { recursive: true });
    writeFileSync(join(profileDir, `${label}.cpuprofile`), JSON.stringify(profile));
  }
  return { result, cpuMs: used };
}
