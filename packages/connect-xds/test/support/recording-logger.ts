// A Logger for tests: it keeps every line and tells when a line matching a pattern arrives.
import type { Logger } from "@xdskit/xds-client";

/** A logger that keeps every line and tells when one matching a pattern arrives. */
export function recordingLogger() {
  const lines: string[] = [];
  let waiters: { pattern: RegExp; resolve: () => void }[] = [];
  const log = (level: string) => (message: string) => {
    lines.push(`${level} ${message}`);
    const still: typeof waiters = [];
    for (const waiter of waiters) {
      if (waiter.pattern.test(message)) waiter.resolve();
      else still.push(waiter);
    }
    waiters = still;
  };
  const logger: Logger = { error: log("error"), warn: log("warn"), info: log("info"), debug: log("debug") };
  return {
    logger,
    lines,
    /** Resolves once a line matching `pattern` was logged (at once if one already was). */
    until(pattern: RegExp): Promise<void> {
      if (lines.some((line) => pattern.test(line))) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ pattern, resolve }));
    },
  };
}
