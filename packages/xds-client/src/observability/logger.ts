// The injected Logger. @xdskit/control-plane declares the same interface (packages stay independent), so one
// logger object, `console` included, serves both.

/** Levels, most severe first. `trace` is the per-request detail, finer than `debug`. */
export type LogLevel = "error" | "warn" | "info" | "debug" | "trace";

/**
 * Where the client writes what it does; it logs nothing unless one is given. `console` fits as it is, and so do
 * pino- or winston-style loggers. There is no `trace` method: trace lines go to `debug`, and only when `isEnabled`
 * returns true for `"trace"` (so `console.trace`, which prints a stack, is never called).
 */
export interface Logger {
  error(message: string, ...details: unknown[]): void;
  warn(message: string, ...details: unknown[]): void;
  info(message: string, ...details: unknown[]): void;
  debug(message: string, ...details: unknown[]): void;
  /**
   * When false for a level, the messages of that level are not even built. Default: `error` to `debug` on,
   * `trace` off.
   */
  isEnabled?(level: LogLevel): boolean;
}

const noop = (): void => {};

/** A logger that drops everything (the default). */
export const noopLogger: Logger = Object.freeze({
  error: noop,
  warn: noop,
  info: noop,
  debug: noop,
  isEnabled: () => false,
});

/** Whether `logger` wants lines of `level`, by the rule documented on `Logger.isEnabled`. */
export function isLevelEnabled(logger: Logger, level: LogLevel): boolean {
  return logger.isEnabled ? logger.isEnabled(level) : level !== "trace";
}

type Message = string | (() => string);

/** A logger that prefixes each line, e.g. `[xds-client] [ads 127.0.0.1:1234] `. Lazy messages are built only when the level is on. */
export interface ScopedLogger {
  error(message: Message, ...details: unknown[]): void;
  warn(message: Message, ...details: unknown[]): void;
  info(message: Message, ...details: unknown[]): void;
  debug(message: Message, ...details: unknown[]): void;
  trace(message: Message, ...details: unknown[]): void;
  child(prefix: string): ScopedLogger;
}

export function scopeLogger(logger: Logger, prefix: string): ScopedLogger {
  const emit =
    (level: LogLevel) =>
    (message: Message, ...details: unknown[]): void => {
      if (!isLevelEnabled(logger, level)) return;
      const line = `${prefix} ${typeof message === "function" ? message() : message}`;
      logger[level === "trace" ? "debug" : level](line, ...details);
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
