#!/usr/bin/env node
// The `xdskit` executable: process I/O, Ctrl-C and the exit code around runCli.
import { runCli } from "./cli.js";

const controller = new AbortController();
let interrupted = 0;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    // A second Ctrl-C while shutting down ends the process at once.
    if (++interrupted > 1) process.exit(130);
    controller.abort();
  });
}

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  signal: controller.signal,
});
