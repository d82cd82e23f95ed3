import type { Logger } from "../../src/index.js";

/** A logger that keeps the client's error lines in `errors` and drops the other levels. */
export function errorLogger(errors: string[]): Logger {
  const drop = () => {};
  return {
    error: (message) => errors.push(message),
    warn: drop,
    info: drop,
    debug: drop,
    isEnabled: (level) => level === "error",
  };
}
