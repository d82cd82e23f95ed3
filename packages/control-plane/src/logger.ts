// The injected Logger. @xdskit/xds-client declares the same interface (packages stay independent), so one logger
// object, `console` included, serves both.

/** Levels, most severe first. `trace` is the per-request detail, finer than `debug`. */
export type LogLevel = "error" | "warn" | "info" | "debug" | "trace";

/**
 * Where the server writes what it does; it logs nothing unless one is given. `console` fits as it is, and so do
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

/** The server's own view of a logger: a `trace` level, and prefixes that nest (`[control-plane] [ads #3]`). */
export interface ScopedLogger extends Logger {
  trace(message: string, ...details: unknown[]): void;
  isEnabled(level: LogLevel): boolean;
  /** This logger with `prefix` added after its own. */
  child(prefix: string): ScopedLogger;
}

/** `logger` with `prefix` before every message; trace lines go to `debug` when trace is on. */
export function prefixLogger(logger: Logger, prefix: string): ScopedLogger {
  const isEnabled = (level: LogLevel): boolean => (logger.isEnabled ? logger.isEnabled(level) : level !== "trace");
  const emit =
    (level: LogLevel) =>
    (message: string, ...details: unknown[]): void => {
      if (isEnabled(level)) logger[level === "trace" ? "debug" : level](`${prefix} ${message}`, ...details);
    };
  return {
    error: emit("error"),
    warn: emit("warn"),
    info: emit("info"),
    debug: emit("debug"),
    trace: emit("trace"),
    isEnabled,
    child: (inner) => prefixLogger(logger, `${prefix} ${inner}`),
  };
}
