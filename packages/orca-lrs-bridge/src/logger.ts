// The injected Logger, the same shape as @xdskit/xds-client's and @xdskit/control-plane's (packages stay
// independent), so one logger object, `console` included, serves them all.

/** Levels, most severe first. `trace` is per-call detail, finer than `debug`. */
export type LogLevel = "error" | "warn" | "info" | "debug" | "trace";

/**
 * Where the bridge writes what it does; it logs nothing unless one is given. There is no `trace` method: trace lines
 * go to `debug`, and only when `isEnabled("trace")` is true (so `console.trace`, which prints a stack, is never called).
 */
export interface Logger {
  error(message: string, ...details: unknown[]): void;
  warn(message: string, ...details: unknown[]): void;
  info(message: string, ...details: unknown[]): void;
  debug(message: string, ...details: unknown[]): void;
  /** When false for a level, messages of that level are not even built. Default: `error` to `debug` on, `trace` off. */
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

type Message = string | (() => string);

/** A logger that prefixes each line; a message given as a function is built only when its level is on. */
export interface ScopedLogger {
  error(message: Message): void;
  warn(message: Message): void;
  info(message: Message): void;
  debug(message: Message): void;
  trace(message: Message): void;
  child(prefix: string): ScopedLogger;
}

export function scopeLogger(logger: Logger, prefix: string): ScopedLogger {
  const emit = (level: LogLevel) => (message: Message) => {
    const enabled = logger.isEnabled ? logger.isEnabled(level) : level !== "trace";
    if (!enabled) return;
    logger[level === "trace" ? "debug" : level](`${prefix} ${typeof message === "function" ? message() : message}`);
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
