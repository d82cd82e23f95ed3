// The CLI's log lines on stderr: the level, the message, then each detail (an error by its message). `serve` writes
// them through serveLogger (serve-log.ts: timed, filtered by level); `relay --verbose` writes every level as is.
import type { Logger } from "@xdskit/control-plane";
import type { CliIo } from "./command.js";

/** The details of a log call as they end its line. */
export function detailText(details: readonly unknown[]): string {
  return details.map((d) => ` ${d instanceof Error ? d.message : String(d)}`).join("");
}

/** Every level to stderr, trace included (the relay's requests and responses are debug lines). */
export function stderrLogger(io: CliIo): Logger {
  const write =
    (level: string) =>
    (message: string, ...details: unknown[]) =>
      io.stderr(`${level} ${message}${detailText(details)}\n`);
  return {
    error: write("error"),
    warn: write("warn"),
    info: write("info"),
    debug: write("debug"),
    isEnabled: () => true,
  };
}
