// The logger `--verbose` gives the servers a command runs (`serve`, `relay`): every level to stderr.
import type { Logger } from "@xdskit/control-plane";
import type { CliIo } from "./command.js";

/** Every level to stderr, `level message details...` a line: what `--verbose` gives the servers a command runs. */
export function stderrLogger(io: CliIo): Logger {
  const write =
    (level: string) =>
    (message: string, ...details: unknown[]) =>
      io.stderr(
        `${level} ${message}${details.map((d) => ` ${d instanceof Error ? d.message : String(d)}`).join("")}\n`,
      );
  return {
    error: write("error"),
    warn: write("warn"),
    info: write("info"),
    debug: write("debug"),
    isEnabled: () => true,
  };
}
