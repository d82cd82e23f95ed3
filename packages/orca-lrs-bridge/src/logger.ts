/** An injected logger (the shape `@xdskit/xds-client` uses); the bridge logs nothing unless one is given. */
export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
  trace(message: string): void;
  /** When false for a level, messages of that level are not even built. Default: every level is on. */
  isEnabled?(level: LogLevel): boolean;
}

export type LogLevel = "error" | "warn" | "info" | "debug" | "trace";

const noop = (): void => {};

export const noopLogger: Logger = Object.freeze({
  error: noop,
  warn: noop,
  info: noop,
  debug: noop,
  trace: noop,
  isEnabled: () => false,
});

/** A logger that prefixes each line; a message given as a function is built only when its level is on. */
export interface ScopedLogger {
  error(message: string | (() => string)): void;
  warn(message: string | (() => string)): void;
  info(message: string | (() => string)): void;
  debug(message: string | (() => string)): void;
  trace(message: string | (() => string)): void;
  child(prefix: string): ScopedLogger;
}

export function scopeLogger(logger: Logger, prefix: string): ScopedLogger {
  const emit = (level: LogLevel) => (message: string | (() => string)) => {
    if (logger.isEnabled && !logger.isEnabled(level)) return;
    logger[level](`${prefix} ${typeof message === "function" ? message() : message}`);
  };
  return {
    error: emit("error"),
    warn: emit("warn"),
    info: emit("info"),
    debug: emit("debug"),
    trace: emit("trace"),
    child: (inner) => scopeLogger(logger, `${prefix} ${inner}`),
  };
}
