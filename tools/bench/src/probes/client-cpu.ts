// The CPU time an @xdskit/xds-client spends on one response, for decisions on a busy machine: wall-clock figures
// swing with the load, the CPU time of this process far less. One process holds the client and a raw ADS server
// (grpc-js, writing pre-encoded responses: the same small cost in every case). Each case sends `rounds` responses,
// waits for the callbacks each one causes, and prints the median CPU time (user + system, every thread of the process:
// GC included) and wall time from the write to the last callback. Not a benchmark with a peer.
//
//   node tools/bench/dist/probes/client-cpu.js [case ...] [--rounds N] [--count N] [--profile DIR]
// `--profile DIR` writes a CPU profile of each case's measured rounds (after the first fill) to DIR/<case>.cpuprofile.
// Cases: sotw-full (every cluster changed), sotw-one (one of them), sotw-reordered (one, the others reversed),
// delta-full, delta-one, eds-watched (10,000 EDS resources, each watched, every one changed), eds-big (one EDS
// resource of 10,000 endpoints, changed).
import { CLIENT_CASES, type ClientCase, measureClientCase } from "../lib/client-cpu.js";

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = args.indexOf(name);
  return at < 0 ? fallback : Number(args[at + 1]);
};
const rounds = option("--rounds", 7);
const profileAt = args.indexOf("--profile");
const profileDir = profileAt < 0 ? undefined : args[profileAt + 1];
const count = option("--count", 10_000);
const chosen = args.filter((a, i) => !a.startsWith("--") && !args[i - 1]?.startsWith("--"));
const unknown = chosen.filter((name) => !(CLIENT_CASES as readonly string[]).includes(name));
if (unknown.length > 0) throw new Error(`unknown case ${unknown.join(", ")}: ${CLIENT_CASES.join(", ")}`);
const cases = (chosen.length > 0 ? chosen : CLIENT_CASES) as readonly ClientCase[];

for (const name of cases) {
  const { cpu, wall, cpus } = await measureClientCase(name, {
    rounds,
    count,
    ...(profileDir === undefined ? {} : { profileDir }),
  });
  console.log(
    `${name.padEnd(15)} cpu ${cpu.toFixed(1).padStart(7)} ms  wall ${wall.toFixed(1).padStart(7)} ms  (cpu: ${cpus.map((x) => x.toFixed(0)).join(" ")})`,
  );
}
process.exit(0);
