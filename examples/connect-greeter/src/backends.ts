// `npm run backends`: the three Greeter backends serve/endpoints.yaml names, until Ctrl-C.
//   greeter-a  127.0.0.1:50051  cluster greeter, zone a
//   greeter-b  127.0.0.1:50052  cluster greeter, zone b
//   greeter-c  127.0.0.1:50053  cluster greeter-canary, zone c
// `--ports 0,0,0` takes any free ports instead (the example's test does; serve/endpoints.yaml must then say them).
import { parseArgs } from "node:util";
import { type GreeterBackend, startGreeterBackend } from "./greeter-backend.js";

const BACKENDS = [
  { name: "greeter-a", zone: "a", cpuUtilization: 0.3 },
  { name: "greeter-b", zone: "b", cpuUtilization: 0.6 },
  { name: "greeter-c", zone: "c", cpuUtilization: 0.2 },
] as const;

const { values } = parseArgs({ options: { ports: { type: "string", default: "50051,50052,50053" } } });
const ports = values.ports.split(",").map(Number);
if (ports.length !== BACKENDS.length || ports.some((port) => !Number.isInteger(port) || port < 0 || port > 65535)) {
  process.stderr.write(`--ports: expected ${BACKENDS.length} ports separated by commas, got "${values.ports}"\n`);
  process.exit(2);
}

const started: GreeterBackend[] = [];
try {
  for (const [i, backend] of BACKENDS.entries()) {
    started.push(await startGreeterBackend({ ...backend, port: ports[i] ?? 0 }));
  }
} catch (error) {
  const reason = (error as NodeJS.ErrnoException).code === "EADDRINUSE" ? "the port is in use" : String(error);
  process.stderr.write(`cannot start ${BACKENDS[started.length]?.name}: ${reason}\n`);
  await Promise.all(started.map((backend) => backend.close()));
  process.exit(1);
}
for (const [i, backend] of started.entries()) {
  process.stdout.write(`${backend.name} on 127.0.0.1:${backend.port} (zone ${BACKENDS[i]?.zone})\n`);
}
process.stdout.write("serving; Ctrl-C to stop\n");

const stop = async () => {
  const counts = started.map((backend) => `${backend.name} ${backend.calls}`).join(", ");
  await Promise.all(started.map((backend) => backend.close()));
  process.stdout.write(`stopped; calls served: ${counts}\n`);
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
