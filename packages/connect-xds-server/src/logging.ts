// The server's view of the injected Logger: lines prefixed per layer (`[connect-xds-server 127.0.0.1:8080] [rds]`),
// lazy messages built only when their level is on. No logger given: nothing is logged.
import type { Logger, LogLevel } from "@xdskit/xds-client";

type Message = string | (() => string);

export interface ServerLogger {
  error(message: Message, ...details: unknown[]): void;
  warn(message: Message, ...details: unknown[]): void;
  info(message: Message, ...details: unknown[]): void;
  debug(message: Message, ...details: unknown[]): void;
  child(prefix: string): ServerLogger;
}

function enabled(logger: Logger, level: LogLevel): boolean {
  return logger.isEnabled ? logger.isEnabled(level) : level !== "trace";
}

export function serverLogger(logger: Logger | undefined, prefix: string): ServerLogger {
  const emit =
    (level: "error" | "warn" | "info" | "debug") =>
    (message: Message, ...details: unknown[]): void => {
      if (logger === undefined || !enabled(logger, level)) return;
      logger[level](`${prefix} ${typeof message === "function" ? message() : message}`, ...details);
    };
  return {
    error: emit("error"),
    warn: emit("warn"),
    info: emit("info"),
    debug: emit("debug"),
    child: (more) => serverLogger(logger, `${prefix} ${more}`),
  };
}
